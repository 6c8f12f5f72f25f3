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
//! panics.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// The most of a collector's answer kept (it says only "accepted", or why
/// not).
const MAX_BODY: usize = 64 * 1024;

/// The workspace's reqwest client on a tokio runtime.
#[derive(Debug, Clone)]
pub(crate) struct TokioReqwest {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl TokioReqwest {
    /// A client whose every export ends within `timeout`.
    pub(crate) fn new(runtime: tokio::runtime::Handle, timeout: Duration) -> Result<Self, String> {
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
        Ok(TokioReqwest { client, runtime })
    }
}

#[async_trait]
impl HttpClient for TokioReqwest {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
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
