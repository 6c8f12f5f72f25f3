//! The Task Manager as the MCP tools see it: one trait, an HTTP client for
//! the real service ([`crate::http`], over the client generated from the
//! OpenAPI file), and an in-memory one with the same behaviour, chosen by
//! [`from_env`] (`USE_MOCK_CLIENT=true` in any letter case picks memory).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

pub use crate::http::HttpClient;
use crate::model::{Execution, Reply, Step, StepCreate, StepPatch, StepStatus, now};

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
