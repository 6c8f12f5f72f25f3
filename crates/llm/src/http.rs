//! The HTTP side both wire formats share: the client, sending with retries,
//! error responses as [`LlmError`]s, SSE with an idle timeout, and running a
//! call as a task that feeds the caller's stream.
//!
//! A call runs in its own task and sends events through a bounded channel;
//! the caller's stream aborts the task when dropped, which closes the
//! connection at once. That is how cancellation reaches the network.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::overflow::is_context_overflow;
use crate::retry::{RetryClass, RetryPolicy, retry_after};
use crate::{EventStream, LlmError, ProviderEvent};

/// What an HTTP provider is built from, in either wire format.
#[derive(Debug, Clone)]
pub struct Settings {
    pub info: crate::ProviderInfo,
    /// e.g. `https://api.deepseek.com` or `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// The variable the key comes from, named in authentication errors.
    pub api_key_env: String,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    pub retry: RetryPolicy,
    /// How long the stream may stay silent before it is abandoned.
    pub stream_idle_timeout: Duration,
    /// Tokens the model may spend thinking (Anthropic extended thinking);
    /// `None` leaves thinking off.
    pub thinking_budget: Option<u32>,
    /// The output limit sent when a request sets none (`max_tokens`);
    /// `None` sends none where the API allows.
    pub max_output_tokens: Option<u32>,
}

/// How the API key is presented.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Auth {
    /// `Authorization: Bearer KEY` (OpenAI format).
    Bearer,
    /// `x-api-key: KEY` (Anthropic).
    ApiKeyHeader,
}

/// Everything needed to send one provider's requests.
pub(crate) struct Connection {
    pub info: crate::ProviderInfo,
    pub endpoint: Endpoint,
    client: reqwest::Client,
    api_key: Option<String>,
    auth: Auth,
    headers: Vec<(String, String)>,
    policy: RetryPolicy,
    pub idle: Duration,
    pub thinking_budget: Option<u32>,
    pub max_output_tokens: Option<u32>,
}

impl Connection {
    /// A connection posting to `base_url` + `path`.
    pub(crate) fn new(settings: Settings, path: &str, auth: Auth) -> Result<Self, LlmError> {
        let url = join_url(&settings.base_url, path);
        Ok(Connection {
            endpoint: Endpoint {
                provider: settings.info.name.clone(),
                key_env: settings.api_key_env,
                url,
                idle: settings.stream_idle_timeout,
            },
            info: settings.info,
            client: client(settings.stream_idle_timeout)?,
            api_key: settings.api_key,
            auth,
            headers: settings.headers,
            policy: settings.retry,
            idle: settings.stream_idle_timeout,
            thinking_budget: settings.thinking_budget,
            max_output_tokens: settings.max_output_tokens,
        })
    }

    /// Posts `body`, retrying as the policy allows, and returns the SSE
    /// reader of the successful response.
    pub(crate) async fn post(&self, emit: &Emitter, bytes: &[u8]) -> Result<SseReader, LlmError> {
        // Encoded once (`encode`): every retry sends the very same bytes.
        let response = send(emit, &self.endpoint, &self.policy, || {
            let mut request = self
                .client
                .post(&self.endpoint.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.to_vec());
            if let Some(key) = &self.api_key {
                request = match self.auth {
                    Auth::Bearer => request.bearer_auth(key),
                    Auth::ApiKeyHeader => request.header("x-api-key", key),
                };
            }
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            request
        })
        .await?;
        Ok(SseReader::new(response, self.idle, &self.endpoint))
    }
}

/// A request body as the bytes every attempt sends.
pub(crate) fn encode(body: &impl serde::Serialize) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(body)
        .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))
}

/// Where a provider's requests go, for requests and for error messages.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The provider's name as the user configured it, e.g. `deepseek`.
    pub provider: String,
    /// The environment variable an API key is read from, for messages.
    pub key_env: String,
    pub url: String,
    /// How long the server may stay silent (`stream_idle_timeout_ms`).
    pub idle: Duration,
}

/// `base_url` + `path`, without doubling a version segment both end and
/// start with: `https://api.anthropic.com/v1` + `/v1/messages` is
/// `https://api.anthropic.com/v1/messages`, as is the same base without
/// `/v1`. Users copy base URLs with and without it.
pub(crate) fn join_url(base_url: &str, path: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    if let Some((version, rest)) = path[1..].split_once('/')
        && base.ends_with(&format!("/{version}"))
    {
        return format!("{base}/{rest}");
    }
    format!("{base}{path}")
}

/// A client whose every read (the response head included) times out after
/// `idle`: a server that accepts the connection and never answers cannot
/// hang a run.
pub(crate) fn client(idle: Duration) -> Result<reqwest::Client, LlmError> {
    // rustls needs a process-wide crypto provider. Installing it again (or
    // after the embedding program chose one) fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = || {
        reqwest::Client::builder()
            // Small requests go out at once, not after the peer's delayed ACK.
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(idle)
    };
    match builder().build() {
        Ok(client) => Ok(client),
        // The system's CA certificates cannot be loaded (a minimal container
        // has none): plain-http endpoints (a local server, a scripted model)
        // still work, and an https one fails at its handshake with
        // `network_error`'s hint on what to install.
        Err(first) => builder().tls_certs_only([]).build().map_err(|_| {
            LlmError::Config(format!(
                "cannot set up the HTTP client: {}. {NO_ROOTS_FIX}",
                error_chain(&first)
            ))
        }),
    }
}

/// What to do when the system's CA certificates are missing.
const NO_ROOTS_FIX: &str = "If the system has no CA certificates, install them (Debian/Ubuntu: \
    `apt-get install ca-certificates`; Fedora/RHEL: `dnf install ca-certificates`; Alpine: \
    `apk add ca-certificates`)";

/// Sends a request, retrying as `policy` allows and telling the caller about
/// each retry. Returns the first successful response.
pub(crate) async fn send(
    emit: &Emitter,
    endpoint: &Endpoint,
    policy: &RetryPolicy,
    request: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, LlmError> {
    let mut retries = 0;
    loop {
        let (error, class, asked) = match request().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let asked = retry_after(response.headers());
                let body = response.text().await.unwrap_or_default();
                let error = error_for_status(endpoint, status, asked, &body);
                let class = match status {
                    // The same request cannot fit the next time either.
                    _ if matches!(error, LlmError::ContextLength { .. }) => None,
                    429 | 503 | 529 => Some(RetryClass::RateLimit),
                    500 | 502 | 504 => Some(RetryClass::Connection),
                    _ => None,
                };
                (error, class, asked)
            }
            Err(e) => (network_error(endpoint, &e), Some(RetryClass::Connection), None),
        };
        let Some(class) = class else {
            return Err(error);
        };
        retries += 1;
        let Some(delay) = policy.delay(class, retries, asked) else {
            return Err(error);
        };
        let retrying =
            ProviderEvent::Retrying { attempt: retries, delay, reason: error.condition() };
        if !emit.send(Ok(retrying)).await {
            return Err(error);
        }
        tokio::time::sleep(delay).await;
    }
}

/// The error an unsuccessful HTTP status stands for.
pub(crate) fn error_for_status(
    endpoint: &Endpoint,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> LlmError {
    let provider = endpoint.provider.clone();
    let url = endpoint.url.clone();
    let message = error_message(body);
    match status {
        401 | 403 => LlmError::Auth { provider, env_var: endpoint.key_env.clone(), message, url },
        429 => LlmError::RateLimited { provider, message, retry_after, url },
        503 | 529 => LlmError::Overloaded { provider, message, url },
        // Some servers (llama.cpp before its 400) answer an overflow with 500.
        400 | 413 | 422 | 500 if is_context_overflow(body) => {
            LlmError::ContextLength { message, url }
        }
        400..=499 => LlmError::BadRequest { provider, status, message, url },
        _ => LlmError::Server { provider, status, message, url },
    }
}

/// The human part of an error body: `error.message` in both APIs' JSON,
/// else the start of the raw text.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    // `error.message` (OpenAI, Anthropic, llama.cpp), `message` (vLLM),
    // `error` as a string (Ollama, LM Studio).
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
    });
    match message {
        Some(m) => m.to_string(),
        None if body.trim().is_empty() => "no details given".to_string(),
        None => body.trim().chars().take(300).collect(),
    }
}

pub(crate) fn network_error(endpoint: &Endpoint, error: &reqwest::Error) -> LlmError {
    // Connected, then no answer within the read timeout (`idle`): a slow
    // server, not an unreachable one.
    if error.is_timeout() && !error.is_connect() {
        return LlmError::Idle { provider: endpoint.provider.clone(), idle: endpoint.idle };
    }
    let mut message = error_chain(error);
    if message.contains("UnknownIssuer") || message.contains("certificate") {
        message.push_str(&format!(". {NO_ROOTS_FIX}"));
    }
    LlmError::Network { provider: endpoint.provider.clone(), url: endpoint.url.clone(), message }
}

/// The error an `error` object inside a stream stands for. Permanent ones
/// (a bad request, a bad key, an oversized context) end the turn; the rest
/// (overload, a server hiccup) are stream failures worth another attempt.
pub(crate) fn in_stream_error(endpoint: &Endpoint, error: &serde_json::Value) -> LlmError {
    let field = |name: &str| error.get(name).and_then(|v| v.as_str()).unwrap_or_default();
    let (kind, code, message) = (field("type"), field("code"), field("message"));
    let provider = endpoint.provider.clone();
    let url = endpoint.url.clone();
    let message =
        if message.is_empty() { "no details given".to_string() } else { message.to_string() };
    if is_context_overflow(&format!("{kind} {code} {message}")) {
        return LlmError::ContextLength { message, url };
    }
    match kind {
        "invalid_request_error" | "not_found_error" => {
            LlmError::BadRequest { provider, status: 400, message, url }
        }
        "authentication_error" | "permission_error" => {
            LlmError::Auth { provider, env_var: endpoint.key_env.clone(), message, url }
        }
        _ => LlmError::Stream {
            provider,
            message: format!("{}: {message}", if kind.is_empty() { "error" } else { kind }),
        },
    }
}

/// An error and its causes, which is where reqwest keeps the useful part
/// ("connection refused", "dns error").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Server-sent events of a response, each awaited for at most `idle`.
pub(crate) struct SseReader {
    events: Pin<Box<dyn Stream<Item = Result<Event, LlmError>> + Send>>,
    idle: Duration,
    provider: String,
}

impl SseReader {
    pub(crate) fn new(response: reqwest::Response, idle: Duration, endpoint: &Endpoint) -> Self {
        let provider = endpoint.provider.clone();
        let name = provider.clone();
        let events = response.bytes_stream().eventsource().map(move |item| {
            item.map_err(|e| {
                let message = match e {
                    // The client's read timeout (the same `idle`) fires
                    // before ours: a silent server, not a broken connection.
                    EventStreamError::Transport(e) if e.is_timeout() => {
                        return LlmError::Idle { provider: name.clone(), idle };
                    }
                    EventStreamError::Transport(e) => {
                        format!("connection lost: {}", error_chain(&e))
                    }
                    EventStreamError::Utf8(e) => format!("the stream is not UTF-8: {e}"),
                    EventStreamError::Parser(e) => format!("malformed server-sent event: {e}"),
                };
                LlmError::Stream { provider: name.clone(), message }
            })
        });
        SseReader { events: Box::pin(events), idle, provider }
    }

    /// The next event, `None` when the stream closed.
    pub(crate) async fn next(&mut self) -> Result<Option<Event>, LlmError> {
        match tokio::time::timeout(self.idle, self.events.next()).await {
            Ok(item) => item.transpose(),
            Err(_) => Err(LlmError::Idle { provider: self.provider.clone(), idle: self.idle }),
        }
    }

    pub(crate) fn stream_error(&self, message: impl Into<String>) -> LlmError {
        LlmError::Stream { provider: self.provider.clone(), message: message.into() }
    }
}

/// The sending half of a call's event stream.
pub(crate) struct Emitter(mpsc::Sender<Result<ProviderEvent, LlmError>>);

impl Emitter {
    /// Sends one item; `false` once the caller has gone (stop working).
    pub(crate) async fn send(&self, item: Result<ProviderEvent, LlmError>) -> bool {
        self.0.send(item).await.is_ok()
    }
}

/// Runs `work` as a task and returns the stream of what it emits.
pub(crate) fn spawn_call<Fut>(work: impl FnOnce(Emitter) -> Fut) -> EventStream
where
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    let task = tokio::spawn(work(Emitter(tx)));
    Box::pin(CallStream { rx, task })
}

struct CallStream {
    rx: mpsc::Receiver<Result<ProviderEvent, LlmError>>,
    task: JoinHandle<()>,
}

impl Stream for CallStream {
    type Item = Result<ProviderEvent, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for CallStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn endpoint() -> Endpoint {
        Endpoint {
            provider: "p".into(),
            key_env: "P_KEY".into(),
            url: "http://x/v1/m".into(),
            idle: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_version_segment_is_not_doubled() {
        for base in ["https://api.anthropic.com", "https://api.anthropic.com/v1/"] {
            assert_eq!(join_url(base, "/v1/messages"), "https://api.anthropic.com/v1/messages");
        }
        assert_eq!(
            join_url("http://127.0.0.1:8080/v1", "/chat/completions"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(join_url("http://h/api/v1", "/v1/messages"), "http://h/api/v1/messages");
        assert_eq!(join_url("http://h/v10", "/v1/messages"), "http://h/v10/v1/messages");
    }

    #[test]
    fn every_status_error_names_the_url() {
        for status in [400, 401, 404, 413, 429, 500, 503] {
            let e = error_for_status(&endpoint(), status, None, r#"{"error":{"message":"no"}}"#);
            assert!(e.to_string().contains("http://x/v1/m"), "{status}: {e}");
        }
        let e = error_for_status(&endpoint(), 404, None, "Not Found");
        assert!(e.to_string().contains("Check `base_url`"), "{e}");
        let e = in_stream_error(&endpoint(), &json!({"type": "invalid_request_error"}));
        assert!(e.to_string().contains("http://x/v1/m"), "{e}");
    }

    #[test]
    fn llama_cpp_overflow_is_a_context_length_error() {
        let body = r#"{"error":{"code":400,"message":"request (4113 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4113,"n_ctx":4096}}"#;
        let e = error_for_status(&endpoint(), 400, None, body);
        assert!(matches!(e, LlmError::ContextLength { .. }), "{e:?}");
        assert!(e.to_string().contains("4113 tokens"), "{e}");
        // Ollama and LM Studio put the message in `error` itself.
        assert_eq!(
            error_message(r#"{"error":"input exceeds maximum context length"}"#),
            "input exceeds maximum context length"
        );
    }

    #[test]
    fn in_stream_errors_are_permanent_or_transient_by_kind() {
        let e =
            in_stream_error(&endpoint(), &json!({"type": "overloaded_error", "message": "busy"}));
        assert!(e.is_transient(), "{e:?}");
        let e = in_stream_error(
            &endpoint(),
            &json!({"type": "invalid_request_error", "message": "bad"}),
        );
        assert!(matches!(e, LlmError::BadRequest { .. }), "{e:?}");
        let e =
            in_stream_error(&endpoint(), &json!({"type": "authentication_error", "message": "no"}));
        assert!(matches!(e, LlmError::Auth { ref env_var, .. } if env_var == "P_KEY"), "{e:?}");
        let e = in_stream_error(
            &endpoint(),
            &json!({"code": "context_length_exceeded", "message": "long"}),
        );
        assert!(matches!(e, LlmError::ContextLength { .. }), "{e:?}");
    }

    #[test]
    fn anthropic_context_limit_wording_is_recognised() {
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"}}"#;
        assert!(matches!(
            error_for_status(&endpoint(), 400, None, body),
            LlmError::ContextLength { .. }
        ));
    }
}
