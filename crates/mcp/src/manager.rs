//! Every configured MCP server, started together, each with a status.
//!
//! Servers start concurrently and independently: one that fails, hangs
//! (bounded by its startup timeout) or exits never holds up or breaks the
//! others. A server that dies is marked closed, and every later call to it
//! fails at once with the same message instead of waiting. Shutdown closes
//! each session and kills each stdio server's whole process group.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axon_protocol::{Preview, ToolAnnotations, ToolOutput, ToolSpec};
use axon_tools::{Tool, ToolContext, ToolFuture, ToolRegistry};
use futures_util::future::join_all;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, ReadResourceRequestParams,
};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;

use crate::client::{Connection, Handler, Spawned, StderrTail, connect, tail_text};
use crate::config::ServerConfig;
use crate::content::{resource_text, to_output};
use crate::errors::McpErrorKind;
use crate::naming::ToolNames;
use crate::resource_tool::{READ_RESOURCE, ReadResource};

/// Longest a listing, read or prompt may take when the server has no
/// `tool_timeout`.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
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
}

/// Told of every server's state changes, as they happen.
pub type StatusObserver = Arc<dyn Fn(&str, &ServerState) + Send + Sync>;

pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    observer: Option<StatusObserver>,
    state: Mutex<ServerState>,
    peer: Option<Peer<RoleClient>>,
    tools: Vec<rmcp::model::Tool>,
    protocol_version: Option<String>,
    offers_resources: bool,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    process_group: Option<u32>,
    /// Whether the server last refused axon's token (HTTP servers).
    login: crate::auth::LoginWatch,
}

impl Server {
    fn state(&self) -> ServerState {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set_state(&self, state: ServerState) {
        let mut current = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if *current != state {
            if let Some(observer) = &self.observer {
                observer(&self.config.name, &state);
            }
            *current = state;
        }
    }

    /// Runs one request to this server within its time limit.
    async fn bounded<T>(
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
    fn live_peer(&self) -> Result<&Peer<RoleClient>, String> {
        match (self.state(), &self.peer) {
            (ServerState::Ready, Some(peer)) if !peer.is_transport_closed() => Ok(peer),
            (ServerState::Ready, Some(_)) | (ServerState::Closed, _) => {
                self.set_state(ServerState::Closed);
                Err(self.disconnected())
            }
            (ServerState::Error(e), _) => {
                Err(format!("MCP server {} is not running: {e}", self.config.name))
            }
            (ServerState::NeedsLogin(message), _) => Err(message),
            _ => Err(format!("MCP server {} is not ready", self.config.name)),
        }
    }

    async fn call(&self, tool: &str, arguments: Value) -> ToolOutput {
        let peer = match self.live_peer() {
            Ok(peer) => peer,
            Err(message) => return ToolOutput::error(message),
        };
        let Value::Object(arguments) = arguments else {
            return ToolOutput::error(format!("arguments for {tool} must be a JSON object"));
        };
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let call = peer.call_tool(request);
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

    fn describe(&self, error: ServiceError, what: &str) -> String {
        if self.login.refused() {
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
}

impl Drop for Server {
    fn drop(&mut self) {
        // A manager dropped without shutdown (an error path, a panic) still
        // takes its servers with it.
        if let Some(group) = self.process_group {
            crate::process::kill(group);
        }
    }
}

/// The running MCP servers of one workspace.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.statuses()).finish()
    }
}

impl McpManager {
    /// Starts every enabled server at once and waits until each is ready,
    /// failed, or past its startup timeout.
    pub async fn start(configs: Vec<ServerConfig>, workspace: &Path) -> McpManager {
        Self::start_observed(configs, workspace, None).await
    }

    /// Like [`McpManager::start`], telling `observer` of every state change
    /// (connecting, then ready or error; later closed) as it happens.
    pub async fn start_observed(
        configs: Vec<ServerConfig>,
        workspace: &Path,
        observer: Option<StatusObserver>,
    ) -> McpManager {
        let http = http_client();
        let starts = configs
            .into_iter()
            .filter(|c| c.enabled)
            .map(|config| start_server(config, workspace, http.clone(), observer.clone()));
        McpManager { servers: join_all(starts).await }
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|s| ServerStatus {
                name: s.config.name.clone(),
                state: s.state(),
                tools: s.tools.iter().filter(|t| s.config.offers(&t.name)).count(),
                protocol_version: s.protocol_version.clone(),
            })
            .collect()
    }

    /// Adds every ready server's offered tools to `registry` as
    /// `mcp_{server}_{tool}`; returns problems (tools whose schema does not
    /// compile) as warnings.
    pub fn register_tools(&self, registry: &mut ToolRegistry) -> Vec<String> {
        let mut names = ToolNames::new();
        let mut warnings = Vec::new();
        for server in self.servers.iter().filter(|s| s.state() == ServerState::Ready) {
            for tool in server.tools.iter().filter(|t| server.config.offers(&t.name)) {
                let name = names.assign(&server.config.name, &tool.name, &|n| {
                    registry.contains(n) || n == READ_RESOURCE
                });
                let description = tool.description.as_deref().unwrap_or("").trim();
                let spec = ToolSpec {
                    name,
                    description: format!("[MCP server {}] {description}", server.config.name),
                    input_schema: Value::Object((*tool.input_schema).clone()),
                    // Annotations from a server are hints, not guarantees:
                    // every MCP tool goes through the approval policy.
                    annotations: ToolAnnotations::DESTRUCTIVE,
                };
                let mcp_tool =
                    McpTool { spec, server: Arc::clone(server), tool: tool.name.to_string() };
                if let Err(e) = registry.try_register(Arc::new(mcp_tool)) {
                    warnings.push(format!(
                        "MCP server {}: tool {} skipped: {e}",
                        server.config.name, tool.name
                    ));
                }
            }
        }
        let with_resources: Vec<Arc<Server>> = self
            .servers
            .iter()
            .filter(|s| s.state() == ServerState::Ready && s.offers_resources)
            .cloned()
            .collect();
        if !with_resources.is_empty() && !registry.contains(READ_RESOURCE) {
            let names: Vec<String> = with_resources.iter().map(|s| s.config.name.clone()).collect();
            if let Err(e) =
                registry.try_register(Arc::new(ReadResource { servers: with_resources, names }))
            {
                warnings.push(format!("{READ_RESOURCE} skipped: {e}"));
            }
        }
        warnings
    }

    /// Calls `tool` on `server` directly (by their MCP names).
    pub async fn call(&self, server: &str, tool: &str, arguments: Value) -> ToolOutput {
        match self.servers.iter().find(|s| s.config.name == server) {
            Some(s) => s.call(tool, arguments).await,
            None => ToolOutput::error(format!("no MCP server named '{server}' is configured")),
        }
    }

    /// Tools of `server` as `(name, description)`.
    pub fn tools_of(&self, server: &str) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter(|s| s.config.name == server)
            .flat_map(|s| {
                s.tools.iter().filter(|t| s.config.offers(&t.name)).map(|t| {
                    (t.name.to_string(), t.description.as_deref().unwrap_or("").to_string())
                })
            })
            .collect()
    }

    /// Resources of `server`: `(uri, name, description)`.
    pub async fn list_resources(
        &self,
        server: &str,
    ) -> Result<Vec<(String, String, String)>, String> {
        let s = self.server(server)?;
        let resources = s.bounded("listing resources", s.live_peer()?.list_all_resources()).await?;
        Ok(resources
            .into_iter()
            .map(|r| (r.uri.clone(), r.name.clone(), r.description.clone().unwrap_or_default()))
            .collect())
    }

    /// Prompts of `server`: `(name, description, argument names)`.
    pub async fn list_prompts(
        &self,
        server: &str,
    ) -> Result<Vec<(String, String, Vec<String>)>, String> {
        let s = self.server(server)?;
        let prompts = s.bounded("listing prompts", s.live_peer()?.list_all_prompts()).await?;
        Ok(prompts
            .into_iter()
            .map(|p| {
                let arguments =
                    p.arguments.unwrap_or_default().into_iter().map(|a| a.name).collect();
                (p.name, p.description.unwrap_or_default(), arguments)
            })
            .collect())
    }

    /// A prompt of `server`, filled in with `arguments`, as text.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let s = self.server(server)?;
        let request = GetPromptRequestParams::new(name.to_string()).with_arguments(arguments);
        let result =
            s.bounded(&format!("prompt {name}"), s.live_peer()?.get_prompt(request)).await?;
        let messages: Vec<String> = result
            .messages
            .into_iter()
            .map(|m| {
                let role =
                    serde_json::to_value(&m.role).ok().and_then(|v| v.as_str().map(String::from));
                let text = to_output(CallToolResult::success(vec![m.content])).text_content();
                format!("[{}]\n{text}", role.unwrap_or_else(|| "message".into()))
            })
            .collect();
        Ok(messages.join("\n\n"))
    }

    fn server(&self, name: &str) -> Result<&Arc<Server>, String> {
        self.servers
            .iter()
            .find(|s| s.config.name == name)
            .ok_or_else(|| format!("no MCP server named '{name}' is configured"))
    }

    /// Reads a resource from `server`.
    pub async fn read_resource(&self, server: &str, uri: &str) -> ToolOutput {
        match self.server(server) {
            Ok(s) => read_resource(s, uri).await,
            Err(message) => ToolOutput::error(message),
        }
    }

    /// Closes every session and kills every stdio server's process group.
    pub async fn shutdown(&self) {
        join_all(self.servers.iter().map(|server| async move {
            if let Some(mut service) = server.service.lock().await.take() {
                let _ = service.close_with_timeout(Duration::from_millis(500)).await;
            }
            if let Some(group) = server.process_group {
                crate::process::kill(group);
            }
            // A server that never started keeps its error.
            if !matches!(server.state(), ServerState::Error(_) | ServerState::NeedsLogin(_)) {
                server.set_state(ServerState::Closed);
            }
        }))
        .await;
    }

    /// Servers still connected.
    pub fn active(&self) -> usize {
        self.servers.iter().filter(|s| s.state() == ServerState::Ready).count()
    }
}

async fn start_server(
    config: ServerConfig,
    workspace: &Path,
    http: Result<reqwest::Client, String>,
    observer: Option<StatusObserver>,
) -> Arc<Server> {
    if let Some(observer) = &observer {
        observer(&config.name, &ServerState::Connecting);
    }
    let stderr: StderrTail = Arc::new(Mutex::new(VecDeque::new()));
    let spawned = Arc::new(Mutex::new(Spawned::default()));
    let limit = config.startup_timeout;
    let started = tokio::time::timeout(limit, async {
        let connection =
            connect(&config, workspace, &http, Arc::clone(&stderr), Arc::clone(&spawned)).await?;
        let peer = connection.service.peer().clone();
        let offers_tools = peer.peer_info().is_none_or(|info| info.capabilities.tools.is_some());
        let tools = if offers_tools {
            peer.list_all_tools().await.map_err(|e| format!("listing its tools failed: {e}"))?
        } else {
            Vec::new()
        };
        Ok::<(Connection, Vec<rmcp::model::Tool>), String>((connection, tools))
    })
    .await;
    let failed = async |message: String| {
        // Whatever was started goes, and its last words are read to the end.
        let (group, reader, refused) = {
            let mut known = spawned.lock().unwrap_or_else(PoisonError::into_inner);
            (known.group.take(), known.stderr_reader.take(), known.login.refused())
        };
        if let Some(group) = group {
            crate::process::kill(group);
        }
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(Duration::from_millis(300), reader).await;
        }
        let tail = tail_text(&stderr);
        let message = if tail.is_empty() {
            message
        } else {
            format!("{message}\nits stderr ended with:\n{tail}")
        };
        let state = if refused {
            ServerState::NeedsLogin(crate::auth::needs_login_message(&config.name))
        } else {
            ServerState::Error(message)
        };
        if let Some(observer) = &observer {
            observer(&config.name, &state);
        }
        Arc::new(Server {
            config: config.clone(),
            observer: observer.clone(),
            state: Mutex::new(state),
            peer: None,
            tools: Vec::new(),
            protocol_version: None,
            offers_resources: false,
            service: tokio::sync::Mutex::new(None),
            process_group: None,
            login: Default::default(),
        })
    };
    match started {
        Ok(Ok((connection, tools))) => {
            let peer = connection.service.peer().clone();
            let protocol_version = peer.peer_info().map(|i| i.protocol_version.to_string());
            let offers_resources =
                peer.peer_info().is_some_and(|i| i.capabilities.resources.is_some());
            if let Some(observer) = &observer {
                observer(&config.name, &ServerState::Ready);
            }
            Arc::new(Server {
                config: config.clone(),
                observer: observer.clone(),
                state: Mutex::new(ServerState::Ready),
                peer: Some(peer),
                tools,
                protocol_version,
                offers_resources,
                service: tokio::sync::Mutex::new(Some(connection.service)),
                process_group: connection.process_group,
                login: spawned.lock().unwrap_or_else(PoisonError::into_inner).login.clone(),
            })
        }
        Ok(Err(message)) => failed(message).await,
        Err(_) => {
            failed(format!("it did not finish starting within {:.1}s", limit.as_secs_f64())).await
        }
    }
}

/// A tool of an MCP server, as the registry holds it.
struct McpTool {
    spec: ToolSpec,
    server: Arc<Server>,
    tool: String,
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.server.call(&self.tool, args).await) })
    }

    /// An approval shows the server and its own name for the tool, which
    /// `mcp_{server}_{tool}` may not (sanitised, shortened, hashed).
    fn preview(&self, _ctx: &ToolContext, args: &Value) -> Option<Preview> {
        Some(Preview::Mcp {
            server: self.server.config.name.clone(),
            tool: self.tool.clone(),
            arguments: args.clone(),
        })
    }
}

/// The client HTTP servers are reached with; its failure fails only them.
fn http_client() -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        // Small requests go out at once, not after the peer's delayed ACK.
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
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
