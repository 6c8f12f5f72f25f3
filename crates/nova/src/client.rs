//! The Task Manager as the MCP tools see it: one trait, an HTTP client for
//! the real service, and an in-memory one with the same behaviour, chosen by
//! [`from_env`] (`USE_MOCK_CLIENT=true` in any letter case picks memory).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::model::{
    ErrorBody, Execution, ExecutionPatch, Reply, Step, StepCreate, StepPatch, StepStatus, now,
};

pub type ReplyFuture<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// Which implementation a client is (seed 004, property 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Http,
    Memory,
}

pub trait TaskManager: Send + Sync {
    fn kind(&self) -> ClientKind;
    fn patch_execution<'a>(&'a self, execution_id: &'a str, session_id: &'a str)
    -> ReplyFuture<'a>;
    fn create_step<'a>(&'a self, execution_id: &'a str, create: StepCreate) -> ReplyFuture<'a>;
    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> ReplyFuture<'a>;
    fn health(&self) -> ReplyFuture<'_>;
}

/// The client the environment asks for: memory when `USE_MOCK_CLIENT` is
/// `true` (any case), else HTTP to `TASK_MANAGER_URL`.
pub fn from_env(use_mock: Option<&str>, base_url: Option<&str>) -> Arc<dyn TaskManager> {
    if use_mock.is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        Arc::new(MemoryClient::default())
    } else {
        Arc::new(HttpClient::new(base_url.unwrap_or(DEFAULT_URL), REQUEST_TIMEOUT))
    }
}

pub const DEFAULT_URL: &str = "http://localhost:8080";
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The real service over HTTP.
pub struct HttpClient {
    base_url: String,
    http: reqwest::Client,
}

impl HttpClient {
    pub fn new(base_url: &str, timeout: Duration) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        HttpClient { base_url: base_url.trim_end_matches('/').to_string(), http }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        done: &str,
    ) -> Reply {
        let url = format!("{}{path}", self.base_url);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Reply::err("Request timeout"),
            Err(e) if e.is_connect() => {
                return Reply::err(format!("Connection failed to {}", self.base_url));
            }
            Err(e) => return Reply::err(format!("Request to {url} failed: {e}")),
        };
        let status = response.status().as_u16();
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) if e.is_timeout() => return Reply::err("Request timeout"),
            Err(e) => return Reply::err(format!("Reading the answer from {url} failed: {e}")),
        };
        if status >= 400 {
            return match serde_json::from_str::<ErrorBody>(&text) {
                Ok(body) => Reply::api_err(body.error, Some(body.error_code), status),
                Err(_) => Reply::api_err(
                    format!("HTTP {status} from {url}: {}", text.trim()),
                    None,
                    status,
                ),
            };
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(data) => Reply::ok(done, data),
            Err(e) => Reply::err(format!("{url} answered with something that is not JSON: {e}")),
        }
    }
}

fn body<T: Serialize>(value: &T) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// A path segment, percent-encoded so any id is safe in a URL.
fn segment(text: &str) -> String {
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
            let path = format!("/api/executions/{}", segment(execution_id));
            self.send(reqwest::Method::PATCH, &path, body(&patch), "Execution session updated")
                .await
        })
    }

    fn create_step<'a>(&'a self, execution_id: &'a str, create: StepCreate) -> ReplyFuture<'a> {
        Box::pin(async move {
            let path = format!("/api/executions/{}/steps", segment(execution_id));
            self.send(reqwest::Method::POST, &path, body(&create), "Step created").await
        })
    }

    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> ReplyFuture<'a> {
        Box::pin(async move {
            let path =
                format!("/api/executions/{}/steps/{}", segment(execution_id), segment(step_id));
            self.send(reqwest::Method::PATCH, &path, body(&patch), "Step updated").await
        })
    }

    fn health(&self) -> ReplyFuture<'_> {
        Box::pin(async move {
            self.send(reqwest::Method::GET, "/api/health", None, "Task Manager is healthy").await
        })
    }
}

/// The same behaviour in memory, for tests and offline use.
#[derive(Default)]
pub struct MemoryClient {
    state: Mutex<MemoryState>,
}

#[derive(Default)]
struct MemoryState {
    executions: HashMap<String, Execution>,
    steps: Vec<Step>,
    next: u64,
}

impl MemoryClient {
    /// A step as it is now (for tests).
    pub fn step(&self, step_id: &str) -> Option<Step> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.steps.iter().find(|s| s.step_id == step_id).cloned()
    }

    /// An execution as it is now (for tests).
    pub fn execution(&self, execution_id: &str) -> Option<Execution> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.executions.get(execution_id).cloned()
    }
}

fn data<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl TaskManager for MemoryClient {
    fn kind(&self) -> ClientKind {
        ClientKind::Memory
    }

    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        session_id: &'a str,
    ) -> ReplyFuture<'a> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let time = now();
        let execution =
            state.executions.entry(execution_id.to_string()).or_insert_with(|| Execution {
                execution_id: execution_id.to_string(),
                session_id: None,
                worktree_path: None,
                created_at: time.clone(),
                updated_at: time.clone(),
            });
        execution.session_id = Some(session_id.to_string());
        execution.updated_at = time;
        let reply = Reply::ok("Execution session updated", data(execution));
        Box::pin(std::future::ready(reply))
    }

    fn create_step<'a>(&'a self, execution_id: &'a str, create: StepCreate) -> ReplyFuture<'a> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.next += 1;
        let time = now();
        let step = Step {
            step_id: format!("step-{}", state.next),
            execution_id: execution_id.to_string(),
            step_name: create.step_name,
            message: create.message,
            status: create.status.unwrap_or(StepStatus::Running),
            created_at: time.clone(),
            updated_at: time,
        };
        let reply = Reply::ok("Step created", data(&step));
        state.steps.push(step);
        Box::pin(std::future::ready(reply))
    }

    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> ReplyFuture<'a> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let found =
            state.steps.iter_mut().find(|s| s.step_id == step_id && s.execution_id == execution_id);
        let reply = match found {
            None => Reply::err(format!("Step {step_id} not found")),
            Some(step) => {
                if let Some(status) = patch.status {
                    step.status = status;
                }
                if let Some(message) = patch.message {
                    step.message = Some(message);
                }
                step.updated_at = now();
                Reply::ok("Step updated", data(step))
            }
        };
        Box::pin(std::future::ready(reply))
    }

    fn health(&self) -> ReplyFuture<'_> {
        Box::pin(std::future::ready(Reply::ok("Task Manager is healthy", json!({"status": "ok"}))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_encoded_in_paths() {
        assert_eq!(segment("exec-1"), "exec-1");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
    }
}
