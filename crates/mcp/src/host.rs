//! What servers may ask of the program hosting the client: a model's answer
//! (`sampling/createMessage`) and the user's (`elicitation/create`).
//!
//! The MCP crate knows neither the session's model nor its user; the
//! program that does implements [`ClientHost`] and sets it on the manager
//! ([`McpManager::set_host`](crate::McpManager::set_host)) once it can
//! answer. Until then (and for a host that cannot reach anyone), sampling
//! is refused with a reason and forms are answered with their defaults or
//! declined. The same shared state routes each server's progress
//! notifications to the call that asked for them.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use axon_protocol::{ElicitAction, Message};
use axon_tools::{Progress, ProgressSink};
use rmcp::model::ProgressToken;
use serde_json::{Map, Value};

/// A boxed future a [`ClientHost`] answers with.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A server's request for a model's answer, in axon's own terms.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The server's own system prompt (the session's is never sent).
    pub system_prompt: Option<String>,
    /// The server's messages, text and images, in order.
    pub messages: Vec<Message>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
}

/// The model's answer to a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingReply {
    /// The model that answered.
    pub model: String,
    pub text: String,
    /// Why it stopped, in MCP's words (`endTurn`, `maxTokens`), if known.
    pub stop_reason: Option<String>,
}

/// A server's form: a message, and the JSON Schema of the object it wants
/// (flat: one property per field).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    pub message: String,
    pub schema: Value,
}

/// The user's answer to an [`ElicitationRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct Elicited {
    pub action: ElicitAction,
    /// The fields submitted, with `accept`.
    pub content: Option<Map<String, Value>>,
}

/// Answers what servers ask of the client.
pub trait ClientHost: Send + Sync {
    /// Runs `request` on a model, after whatever consent the host requires;
    /// `Err` says why it was refused or failed (told to the server).
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> HostFuture<'a, Result<SamplingReply, String>>;

    /// Asks the user to fill in `request`; `None` when nobody can answer
    /// (the form is then answered with its defaults, or declined).
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitationRequest,
    ) -> HostFuture<'a, Option<Elicited>>;
}

/// Progress notifications kept while no call claims their token yet (one
/// may arrive before the call that sent the token registers it).
const UNCLAIMED: usize = 32;

/// What every server of one manager shares: the host, once set, and where
/// each running call's progress goes.
#[derive(Default)]
pub(crate) struct ClientShared {
    host: RwLock<Option<Arc<dyn ClientHost>>>,
    routes: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    sinks: HashMap<(String, ProgressToken), ProgressSink>,
    unclaimed: VecDeque<(String, ProgressToken, Progress)>,
}

impl ClientShared {
    pub(crate) fn set_host(&self, host: Arc<dyn ClientHost>) {
        *self.host.write().unwrap_or_else(PoisonError::into_inner) = Some(host);
    }

    pub(crate) fn host(&self) -> Option<Arc<dyn ClientHost>> {
        self.host.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Sends `server`'s progress for `token` to `sink` until the returned
    /// guard is dropped; what already arrived for it is sent first.
    pub(crate) fn route(
        self: &Arc<Self>,
        server: &str,
        token: ProgressToken,
        sink: ProgressSink,
    ) -> RouteGuard {
        let key = (server.to_string(), token);
        let sink = increasing(sink);
        let early: Vec<Progress> = {
            let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
            let mut early = Vec::new();
            routes.unclaimed.retain(|(s, t, progress)| {
                let claimed = *s == key.0 && *t == key.1;
                if claimed {
                    early.push(progress.clone());
                }
                !claimed
            });
            routes.sinks.insert(key.clone(), Arc::clone(&sink));
            early
        };
        let mut early = early;
        early.sort_by(|a, b| a.progress.total_cmp(&b.progress));
        for progress in early {
            sink(progress);
        }
        RouteGuard { shared: Arc::clone(self), key }
    }

    /// Passes a notification to the call that sent `token`.
    pub(crate) fn progress(&self, server: &str, token: ProgressToken, progress: Progress) {
        let sink = {
            let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (server.to_string(), token);
            match routes.sinks.get(&key) {
                Some(sink) => Some(Arc::clone(sink)),
                None => {
                    if routes.unclaimed.len() == UNCLAIMED {
                        routes.unclaimed.pop_front();
                    }
                    routes.unclaimed.push_back((key.0, key.1, progress.clone()));
                    None
                }
            }
        };
        // Called outside the lock: a sink may take its time.
        if let Some(sink) = sink {
            sink(progress);
        }
    }
}

/// Ends a call's progress route when dropped.
pub(crate) struct RouteGuard {
    shared: Arc<ClientShared>,
    key: (String, ProgressToken),
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut routes = self.shared.routes.lock().unwrap_or_else(PoisonError::into_inner);
        routes.sinks.remove(&self.key);
        // Late notifications of this call are of no use to anyone.
        let key = &self.key;
        routes.unclaimed.retain(|(s, t, _)| !(*s == key.0 && *t == key.1));
    }
}

/// `schema`'s defaults as a form's content; `None` when it declares none.
pub(crate) fn defaults(schema: &Value) -> Option<Map<String, Value>> {
    let defaults: Map<String, Value> = schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| property.get("default").map(|d| (name.clone(), d.clone())))
        .collect();
    (!defaults.is_empty()).then_some(defaults)
}

/// `sink`, passed only progress that goes forward. The SDK hands each
/// notification to its own task, so two may arrive swapped; the spec has
/// progress increase with each one, so an older one that arrives late is
/// dropped rather than shown as the call going backwards.
fn increasing(sink: ProgressSink) -> ProgressSink {
    let last = Mutex::new(f64::NEG_INFINITY);
    Arc::new(move |progress: Progress| {
        let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
        if progress.progress > *last {
            *last = progress.progress;
            // Under the lock, so what is passed on stays in order.
            sink(progress);
        }
    })
}
