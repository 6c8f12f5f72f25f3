//! One configured MCP server as the manager holds it, from the moment it is
//! configured: its state, its session once it has one, and its tools as the
//! server last listed them.
//!
//! Guarantees:
//! - Every change a caller could see (a state, the tool list) is made under
//!   one lock and then announced once on the manager's [`Changes`], so a
//!   waiter never misses one and a reader never sees half of one.
//! - A call, read or listing fails at once with the server's state when it
//!   is not ready (still starting, failed, gone), never waits for it.
//! - A server dropped without shutdown still kills its process group.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axon_protocol::ToolOutput;
use axon_tools::ProgressSink;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::watch;

use crate::client::{Handler, Spawned};
use crate::config::ServerConfig;
use crate::content::{resource_text, to_output};
use crate::errors::McpErrorKind;
use crate::host::ClientShared;

/// Longest a listing, read or prompt may take when the server has no
/// `tool_timeout`.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a server is in its life.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerState {
    #[default]
    Connecting,
    Ready,
    /// It could not start; the message includes the end of its stderr.
    Error(String),
    /// It was shut down or went away.
    Closed,
    /// It refuses axon without a (valid) OAuth token; the message says to
    /// run `axon mcp login NAME`.
    NeedsLogin(String),
}

/// A server's state as front ends show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// Tools offered to the model.
    pub tools: usize,
    /// The protocol version the server agreed to.
    pub protocol_version: Option<String>,
    /// How long it took to become ready or to fail, attempts and the pause
    /// between them included.
    pub startup: Option<Duration>,
}

/// Told of every server's state changes, as they happen.
pub type StatusObserver = Arc<dyn Fn(&ServerStatus) + Send + Sync>;

/// Counts every change to any server of a manager (its generation), so
/// waiters and tool registries can tell when to look again.
pub(crate) type Changes = watch::Sender<u64>;

/// What a connected server offers, replaced as a whole when it changes.
#[derive(Default)]
struct Live {
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    tools: Arc<Vec<rmcp::model::Tool>>,
    protocol_version: Option<String>,
    offers_resources: bool,
    startup: Option<Duration>,
}

pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    observer: Option<StatusObserver>,
    live: Mutex<Live>,
    changes: Arc<Changes>,
    pub(crate) service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    /// A stdio server's process group and stderr reader, known from the
    /// moment it is spawned, so one that fails or is shut down while it
    /// starts is still cleaned up.
    pub(crate) spawned: Arc<Mutex<Spawned>>,
    /// The manager's host and progress routes.
    pub(crate) client: Arc<ClientShared>,
}

/// What a server that finished its handshake offers.
pub(crate) struct Connected {
    pub peer: Peer<RoleClient>,
    pub tools: Vec<rmcp::model::Tool>,
    pub startup: Duration,
}

impl Server {
    pub(crate) fn new(
        config: ServerConfig,
        observer: Option<StatusObserver>,
        changes: Arc<Changes>,
        client: Arc<ClientShared>,
    ) -> Server {
        Server {
            config,
            observer,
            live: Mutex::default(),
            changes,
            service: tokio::sync::Mutex::new(None),
            spawned: Arc::default(),
            client,
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn state(&self) -> ServerState {
        self.live().state.clone()
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let live = self.live();
        ServerStatus {
            name: self.config.name.clone(),
            state: live.state.clone(),
            tools: live.tools.iter().filter(|t| self.config.offers(&t.name)).count(),
            protocol_version: live.protocol_version.clone(),
            startup: live.startup,
        }
    }

    /// Its tools as last listed, the ones the config leaves out included.
    pub(crate) fn tools(&self) -> Arc<Vec<rmcp::model::Tool>> {
        Arc::clone(&self.live().tools)
    }

    pub(crate) fn offers_resources(&self) -> bool {
        self.live().offers_resources
    }

    /// Applies `change` to what is known of the server, then tells the
    /// observer (when the state changed) and every waiter.
    fn change(&self, change: impl FnOnce(&mut Live)) {
        let state_changed = {
            let mut live = self.live();
            let before = live.state.clone();
            change(&mut live);
            live.state != before
        };
        // Counted before it is told: whoever hears of it and then looks
        // finds it done.
        self.changes.send_modify(|generation| *generation += 1);
        if state_changed && let Some(observer) = &self.observer {
            observer(&self.status());
        }
    }

    pub(crate) fn set_state(&self, state: ServerState) {
        // Telling it again is no change: nothing is rebuilt for it.
        if self.state() == state {
            return;
        }
        self.change(|live| live.state = state);
    }

    /// The handshake finished: the server is ready with these tools.
    pub(crate) fn connected(&self, connected: Connected) {
        let info = connected.peer.peer_info();
        let protocol_version = info.as_ref().map(|i| i.protocol_version.to_string());
        let offers_resources = info.is_some_and(|i| i.capabilities.resources.is_some());
        self.change(|live| {
            live.peer = Some(connected.peer);
            live.tools = Arc::new(connected.tools);
            live.protocol_version = protocol_version;
            live.offers_resources = offers_resources;
            live.startup = Some(connected.startup);
            live.state = ServerState::Ready;
        });
    }

    /// It could not start: `message` says why. A server that refused
    /// axon's token (or the lack of one) needs a login instead.
    pub(crate) fn failed(&self, message: String, startup: Duration) {
        let state = if self.login_refused() {
            ServerState::NeedsLogin(crate::auth::needs_login_message(&self.config.name))
        } else {
            ServerState::Error(message)
        };
        self.change(|live| {
            live.startup = Some(startup);
            live.state = state;
        });
    }

    /// Whether the server last refused axon's token (HTTP servers).
    pub(crate) fn login_refused(&self) -> bool {
        self.spawned.lock().unwrap_or_else(PoisonError::into_inner).login.refused()
    }

    /// The server said its tools changed: they are listed again. A server
    /// that cannot list them keeps the list it had, and the failure is
    /// returned for a warning.
    pub(crate) async fn relist_tools(&self) -> Result<(), String> {
        let peer = self.live_peer()?;
        let tools = self.bounded("listing its tools", peer.list_all_tools()).await?;
        self.change(|live| live.tools = Arc::new(tools));
        Ok(())
    }

    /// Runs one request to this server within its time limit.
    pub(crate) async fn bounded<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, String> {
        let limit = self.config.tool_timeout.unwrap_or(OPERATION_TIMEOUT);
        match tokio::time::timeout(limit, request).await {
            Ok(result) => result.map_err(|e| self.describe(e, what)),
            Err(_) => Err(format!(
                "[network] MCP server {} did not answer {what} within {}s",
                self.config.name,
                limit.as_secs_f64()
            )),
        }
    }

    fn disconnected(&self) -> String {
        format!("MCP server {} disconnected", self.config.name)
    }

    /// The peer, if the server is usable.
    pub(crate) fn live_peer(&self) -> Result<Peer<RoleClient>, String> {
        let (state, peer) = {
            let live = self.live();
            (live.state.clone(), live.peer.clone())
        };
        match (state, peer) {
            (ServerState::Ready, Some(peer)) if !peer.is_transport_closed() => Ok(peer),
            (ServerState::Ready, Some(_)) | (ServerState::Closed, _) => {
                self.set_state(ServerState::Closed);
                Err(self.disconnected())
            }
            (ServerState::Error(e), _) => {
                Err(format!("MCP server {} is not running: {e}", self.config.name))
            }
            (ServerState::NeedsLogin(message), _) => Err(message),
            _ => Err(format!(
                "MCP server {} is still starting; its tools can be used once it is ready",
                self.config.name
            )),
        }
    }

    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        progress: Option<ProgressSink>,
    ) -> ToolOutput {
        let peer = match self.live_peer() {
            Ok(peer) => peer,
            Err(message) => return ToolOutput::error(message),
        };
        let Value::Object(arguments) = arguments else {
            return ToolOutput::error(format!("arguments for {tool} must be a JSON object"));
        };
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let call =
            crate::call::call_tool(&peer, &self.client, &self.config.name, request, progress);
        let result = match self.config.tool_timeout {
            // Dropping the call on timeout sends the server a cancellation.
            Some(limit) => match tokio::time::timeout(limit, call).await {
                Ok(result) => result,
                Err(_) => {
                    return ToolOutput::error(format!(
                        "[network] {tool} on MCP server {} did not finish within {}s",
                        self.config.name,
                        limit.as_secs_f64()
                    ));
                }
            },
            None => call.await,
        };
        match result {
            Ok(result) => {
                let mut output = to_output(result);
                if output.is_error {
                    output
                        .content
                        .insert(0, axon_protocol::ContentPart::text("[execution failed]"));
                }
                output
            }
            Err(error) => ToolOutput::error(self.describe(error, tool)),
        }
    }

    pub(crate) fn describe(&self, error: ServiceError, what: &str) -> String {
        // Only a request that did not get through can have been refused for
        // its token; another request's 401 says nothing about this error.
        let not_through =
            matches!(error, ServiceError::TransportSend(_) | ServiceError::TransportClosed);
        if not_through && self.login_refused() {
            // Refused even after a refresh: only a new sign-in helps.
            let message = crate::auth::needs_login_message(&self.config.name);
            self.set_state(ServerState::NeedsLogin(message.clone()));
            return format!("[{}] {message}", McpErrorKind::PermissionDenied);
        }
        match error {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.set_state(ServerState::Closed);
                self.disconnected()
            }
            ServiceError::McpError(data) => {
                let kind = McpErrorKind::of(data.code.0, &data.message, what);
                format!(
                    "[{kind}] MCP server {} refused {what}: {} (code {})",
                    self.config.name, data.message, data.code.0
                )
            }
            ServiceError::Timeout { .. } => {
                format!("[network] MCP server {} did not answer {what} in time", self.config.name)
            }
            other => format!("[unknown] MCP server {} failed on {what}: {other}", self.config.name),
        }
    }

    /// Kills its process group, if it has one still running.
    pub(crate) fn kill(&self) {
        let group = self.spawned.lock().unwrap_or_else(PoisonError::into_inner).group.take();
        if let Some(group) = group {
            axon_process::kill_server_group(group);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A manager dropped without shutdown (an error path, a panic) still
        // takes its servers with it.
        self.kill();
    }
}

/// Reads one resource of `server`, within its time limit.
pub(crate) async fn read_resource(server: &Server, uri: &str) -> ToolOutput {
    let peer = match server.live_peer() {
        Ok(peer) => peer,
        Err(message) => return ToolOutput::error(message),
    };
    let request = peer.read_resource(ReadResourceRequestParams::new(uri.to_string()));
    match server.bounded(&format!("reading {uri}"), request).await {
        Ok(result) => {
            let texts: Vec<String> = result.contents.iter().map(resource_text).collect();
            ToolOutput::text(texts.join("\n\n"))
        }
        Err(message) => ToolOutput::error(message),
    }
}
