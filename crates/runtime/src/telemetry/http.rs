//! The exporter's HTTP client: the workspace's reqwest client, run on the
//! session's tokio runtime.
//!
//! The SDK exports from threads of its own (the periodic metric reader,
//! the batch span processor) that block on the export's future; reqwest's
//! futures need a tokio reactor. Each request is therefore spawned onto
//! the runtime the session was opened on and its result awaited, which
//! works from any executor.
//!
//! Guarantees: every request ends within its timeout (the connection's and
//! the whole exchange's); a response body is read to at most
//! [`MAX_BODY`]; a runtime that has shut down fails the export, never
//! panics; the first export that fails (no answer, or an answer that is
//! not 2xx) is told to the user once ([`FirstFailure`]), never again in the
//! session however many follow, and telling it is a channel push that
//! never waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// The most of a collector's answer kept (it says only "accepted", or why
/// not).
const MAX_BODY: usize = 64 * 1024;

/// Where the first failed export is told: the session's warnings.
pub(crate) type Tell = Arc<dyn Fn(String) + Send + Sync>;

/// Tells the user of the session's first failed export, and only that
/// one: a collector that is down fails every export, every few seconds.
pub(crate) struct FirstFailure {
    told: AtomicBool,
    tell: Tell,
}

impl FirstFailure {
    pub(crate) fn new(tell: Tell) -> Arc<Self> {
        Arc::new(FirstFailure { told: AtomicBool::new(false), tell })
    }

    /// The export to `url` failed because of `why`.
    fn failed(&self, url: &str, why: &str) {
        if self.told.swap(true, Ordering::AcqRel) {
            return;
        }
        (self.tell)(format!(
            "telemetry: exporting to {url} failed: {why}. axon goes on without it (this is said \
             once). Start an OTLP/HTTP collector there (it listens on port 4318 by default), \
             point OTEL_EXPORTER_OTLP_ENDPOINT at one, or unset it to export nothing; `axon \
             doctor` checks the endpoint"
        ));
    }
}

impl std::fmt::Debug for FirstFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstFailure").field("told", &self.told).finish_non_exhaustive()
    }
}

/// What went wrong, from an error's causes: reqwest's own message says
/// only "error sending request for url (…)", repeating the URL named
/// beside it; the causes under it say "Connection refused" or "operation
/// timed out".
pub(crate) fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        cause = inner.source();
    }
    if said.is_empty() { error.to_string() } else { said.join(": ") }
}

/// The workspace's reqwest client on a tokio runtime.
#[derive(Debug, Clone)]
pub(crate) struct TokioReqwest {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    failures: Arc<FirstFailure>,
}

impl TokioReqwest {
    /// A client whose every export ends within `timeout`; the first that
    /// fails is told to `failures`.
    pub(crate) fn new(
        runtime: tokio::runtime::Handle,
        timeout: Duration,
        failures: Arc<FirstFailure>,
    ) -> Result<Self, String> {
        // rustls needs a process-wide crypto provider; installing it again
        // (or after the program chose one) fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let builder = || {
            reqwest::Client::builder()
                .tcp_nodelay(true)
                .connect_timeout(timeout)
                .timeout(timeout)
                // A collector has no business redirecting telemetry.
                .redirect(reqwest::redirect::Policy::none())
        };
        let client = match builder().build() {
            Ok(client) => client,
            // No system CA certificates: an http:// collector still works.
            Err(_) => builder()
                .tls_certs_only([])
                .build()
                .map_err(|e| format!("cannot set up the telemetry HTTP client: {e}"))?,
        };
        Ok(TokioReqwest { client, runtime, failures })
    }
}

#[async_trait]
impl HttpClient for TokioReqwest {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let url = request.uri().to_string();
        let answer = self.exchange(request).await;
        match &answer {
            Ok(response) if !response.status().is_success() => {
                let body = String::from_utf8_lossy(response.body());
                let body: String = body.trim().chars().take(200).collect();
                let said = if body.is_empty() { String::new() } else { format!(" ({body})") };
                self.failures
                    .failed(&url, &format!("the collector answered {}{said}", response.status()));
            }
            Ok(_) => {}
            Err(e) => self.failures.failed(&url, &with_causes(e.as_ref())),
        }
        answer
    }
}

impl TokioReqwest {
    async fn exchange(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request)?;
        let client = self.client.clone();
        let exchange = self.runtime.spawn(async move {
            let response = client.execute(request).await?;
            let mut head = Response::builder().status(response.status());
            for (name, value) in response.headers() {
                head = head.header(name, value);
            }
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                let room = MAX_BODY.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if room <= chunk.len() {
                    break;
                }
            }
            Ok::<_, HttpError>(head.body(Bytes::from(body))?)
        });
        exchange.await?
    }
}
