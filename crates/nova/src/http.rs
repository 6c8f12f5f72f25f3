//! The Task Manager over HTTP: a thin wrapper over the client progenitor
//! generated from `docs/openapi.yaml` ([`crate::generated`]) that answers
//! every call with the seed's uniform [`Reply`]:
//!
//! - success: `{success: true, message, data}`, `data` being what the
//!   server sent (the generated types keep times as text; absent optional
//!   fields read back as `null`);
//! - a timeout: `{success: false, error: "Request timeout"}`;
//! - no connection: `{success: false, error: "Connection failed to BASE_URL"}`;
//! - any status >= 400: `{success: false, error, error_code?, status_code}`,
//!   `error`/`error_code` from the API's error body, or `HTTP STATUS from
//!   URL: BODY` without `error_code` when the body is not one.
//!
//! Ids go into paths percent-encoded by [`segment`] (every byte but
//! `A-Za-z0-9-._~`), which the generated code calls.

use std::cell::RefCell;
use std::time::Duration;

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo, ResponseValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{ClientKind, ReplyFuture, TaskManager};
use crate::generated::{self, types};
use crate::model::{Execution, ExecutionPatch, Reply, Step, StepCreate, StepPatch};

/// The real service over HTTP.
pub struct HttpClient {
    base_url: String,
    api: generated::Client,
}

/// What the last request of one call saw, for errors the generated client
/// reports without it (a documented status whose body did not parse).
#[derive(Default)]
struct Exchange {
    url: String,
    status: Option<u16>,
}

tokio::task_local! {
    static EXCHANGE: RefCell<Exchange>;
}

/// Sends each request with the configured reqwest client, noting its URL
/// and status for [`HttpClient`]'s error messages.
impl ClientHooks<()> for generated::Client {
    async fn exec(
        &self,
        request: reqwest::Request,
        _info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        let url = request.url().to_string();
        let result = self.client().execute(request).await;
        let status = result.as_ref().ok().map(|r| r.status().as_u16());
        let _ = EXCHANGE.try_with(|e| *e.borrow_mut() = Exchange { url, status });
        result
    }
}

/// A path segment, percent-encoded so any id is safe in a URL (progenitor's
/// own encoder leaves `\\`, which URL parsing turns into `/`).
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

type Outcome<T, E> = Result<ResponseValue<T>, progenitor_client::Error<E>>;

impl HttpClient {
    pub fn new(base_url: &str, timeout: Duration) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        let base_url = base_url.trim_end_matches('/').to_string();
        let api = generated::Client::new_with_client(&base_url, http);
        HttpClient { base_url, api }
    }

    /// Runs one generated call and turns its outcome into a [`Reply`]
    /// whose data is the answer read as the model type `M`.
    async fn call<T, M, E>(&self, done: &str, call: impl Future<Output = Outcome<T, E>>) -> Reply
    where
        T: Serialize,
        M: DeserializeOwned + Serialize,
        E: Serialize,
    {
        let (outcome, exchange) = EXCHANGE
            .scope(RefCell::new(Exchange::default()), async {
                let outcome = call.await;
                (outcome, EXCHANGE.with(|e| std::mem::take(&mut *e.borrow_mut())))
            })
            .await;
        match outcome {
            Ok(value) => Reply::ok(done, as_model::<M>(&value.into_inner())),
            Err(error) => self.failure(error, exchange).await,
        }
    }

    async fn failure<E: Serialize>(
        &self,
        error: progenitor_client::Error<E>,
        exchange: Exchange,
    ) -> Reply {
        use progenitor_client::Error as E;
        let url = exchange.url;
        match error {
            E::CommunicationError(e) | E::ResponseBodyError(e) | E::InvalidUpgrade(e)
                if e.is_timeout() =>
            {
                Reply::err("Request timeout")
            }
            E::CommunicationError(e) if e.is_connect() => {
                Reply::err(format!("Connection failed to {}", self.base_url))
            }
            E::CommunicationError(e) | E::InvalidUpgrade(e) => {
                Reply::err(format!("Request to {url} failed: {e}"))
            }
            E::ResponseBodyError(e) => {
                Reply::err(format!("Reading the answer from {url} failed: {e}"))
            }
            E::ErrorResponse(answer) => {
                let status = answer.status().as_u16();
                let body = serde_json::to_value(answer.into_inner()).unwrap_or(Value::Null);
                error_reply(&url, status, &body.to_string())
            }
            E::UnexpectedResponse(response) => {
                let status = response.status().as_u16();
                let text = match response.text().await {
                    Ok(text) => text,
                    Err(e) if e.is_timeout() => return Reply::err("Request timeout"),
                    Err(e) => {
                        return Reply::err(format!("Reading the answer from {url} failed: {e}"));
                    }
                };
                if status >= 400 {
                    return error_reply(&url, status, &text);
                }
                match serde_json::from_str::<Value>(&text) {
                    Ok(data) => Reply::ok(format!("HTTP {status} from {url}"), data),
                    Err(e) => {
                        Reply::err(format!("{url} answered with something that is not JSON: {e}"))
                    }
                }
            }
            E::InvalidResponsePayload(bytes, e) => {
                let text = String::from_utf8_lossy(&bytes);
                match exchange.status {
                    Some(status) if status >= 400 => error_reply(&url, status, &text),
                    _ if serde_json::from_slice::<Value>(&bytes).is_err() => {
                        Reply::err(format!("{url} answered with something that is not JSON: {e}"))
                    }
                    _ => Reply::err(format!(
                        "{url} answered with something that does not match the API: {e}"
                    )),
                }
            }
            E::InvalidRequest(message) | E::Custom(message) => Reply::err(message),
        }
    }
}

/// The reply for status `status` (>= 400) with body `text`: the API's
/// `{error, error_code}` when it is one, else the status and text.
fn error_reply(url: &str, status: u16, text: &str) -> Reply {
    match serde_json::from_str::<types::Error>(text) {
        Ok(body) => Reply::api_err(body.error, Some(body.error_code), status),
        Err(_) => {
            Reply::api_err(format!("HTTP {status} from {url}: {}", text.trim()), None, status)
        }
    }
}

/// `value` (a generated type) as the model type `M` writes it, so absent
/// optional fields read `null` as the server sent them.
fn as_model<M: DeserializeOwned + Serialize>(value: &impl Serialize) -> Value {
    let Ok(value) = serde_json::to_value(value) else { return Value::Null };
    match serde_json::from_value::<M>(value.clone()) {
        Ok(model) => serde_json::to_value(model).unwrap_or(value),
        Err(_) => value,
    }
}

/// `value` (a model type) as the generated type `G`; the generated types
/// check the OpenAPI file's patterns, so this refuses what the API would.
fn to_generated<G: DeserializeOwned>(what: &str, value: &impl Serialize) -> Result<G, Reply> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| Reply::err(format!("invalid {what}: {e}")))
}

/// A path parameter as the generated type `G`.
fn path_id<G: TryFrom<String, Error = types::error::ConversionError>>(
    what: &str,
    id: &str,
) -> Result<G, Reply> {
    G::try_from(id.to_string()).map_err(|e| Reply::err(format!("invalid {what}: {e}")))
}

impl TaskManager for HttpClient {
    fn kind(&self) -> ClientKind {
        ClientKind::Http
    }

    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        session_id: &'a str,
    ) -> ReplyFuture<'a> {
        Box::pin(async move {
            let patch =
                ExecutionPatch { session_id: Some(session_id.to_string()), worktree_path: None };
            let (id, body): (types::PatchExecutionExecutionId, types::ExecutionPatch) =
                match (path_id("execution_id", execution_id), to_generated("patch", &patch)) {
                    (Ok(id), Ok(body)) => (id, body),
                    (Err(reply), _) | (_, Err(reply)) => return reply,
                };
            self.call::<_, Execution, _>(
                "Execution session updated",
                self.api.patch_execution(&id, &body),
            )
            .await
        })
    }

    fn create_step<'a>(&'a self, execution_id: &'a str, create: StepCreate) -> ReplyFuture<'a> {
        Box::pin(async move {
            let (id, body): (types::CreateStepExecutionId, types::StepCreate) =
                match (path_id("execution_id", execution_id), to_generated("step", &create)) {
                    (Ok(id), Ok(body)) => (id, body),
                    (Err(reply), _) | (_, Err(reply)) => return reply,
                };
            self.call::<_, Step, _>("Step created", self.api.create_step(&id, &body)).await
        })
    }

    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> ReplyFuture<'a> {
        Box::pin(async move {
            let (id, step, body): (
                types::PatchStepExecutionId,
                types::PatchStepStepId,
                types::StepPatch,
            ) = match (
                path_id("execution_id", execution_id),
                path_id("step_id", step_id),
                to_generated("patch", &patch),
            ) {
                (Ok(id), Ok(step), Ok(body)) => (id, step, body),
                (Err(reply), _, _) | (_, Err(reply), _) | (_, _, Err(reply)) => return reply,
            };
            self.call::<_, Step, _>("Step updated", self.api.patch_step(&id, &step, &body)).await
        })
    }

    fn health(&self) -> ReplyFuture<'_> {
        Box::pin(async move {
            self.call::<_, Value, _>("Task Manager is healthy", self.api.health()).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_encoded_in_paths() {
        assert_eq!(segment("exec-1"), "exec-1");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        assert_eq!(segment("a\\b?#%"), "a%5Cb%3F%23%25");
    }
}
