//! Every configured MCP server, each starting in the background, each with
//! a status.
//!
//! Servers start concurrently and independently: one that fails, hangs
//! (bounded by its startup timeout, and tried once more) or exits never
//! holds up or breaks the others, and [`McpManager::spawn`] returns before
//! any has started. Whoever needs a server waits for it by name
//! ([`McpManager::wait_for`]), for a bounded time. Every change (a state, a
//! tool list) advances the manager's generation, so a tool registry built
//! from it can tell when it is out of date ([`McpManager::generation`]). A
//! server that dies is marked closed, and every later call to it fails at
//! once with the same message instead of waiting. Shutdown stops the
//! starts still under way, closes each session and kills each stdio
//! server's whole process group.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axon_protocol::{Preview, ToolAnnotations, ToolOutput, ToolSpec};
use axon_tools::{Tool, ToolContext, ToolFuture, ToolRegistry};
use futures_util::future::join_all;
use rmcp::model::{CallToolResult, GetPromptRequestParams};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::ServerConfig;
use crate::content::to_output;
use crate::host::{ClientHost, ClientShared};
use crate::naming::ToolNames;
use crate::resource_tool::{READ_RESOURCE, ReadResource};
use crate::server_state::{Changes, Server, read_resource};
pub use crate::server_state::{ServerState, ServerStatus, StatusObserver};

/// The MCP servers of one workspace.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    changes: Arc<Changes>,
    /// The host and progress routes every server shares.
    client: Arc<ClientShared>,
    /// The background start of each server, then its notifications.
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.statuses()).finish()
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().unwrap_or_else(PoisonError::into_inner).drain(..) {
            task.abort();
        }
    }
}

impl McpManager {
    /// Starts every enabled server and waits until each is ready or has
    /// failed (each bounded by its startup timeout and one retry), for
    /// commands that need them all before they can do anything.
    pub async fn start(configs: Vec<ServerConfig>, workspace: &Path) -> McpManager {
        let manager = Self::spawn(configs, workspace, None);
        manager.wait_for_all().await;
        manager
    }

    /// Starts every enabled server in the background and returns at once,
    /// each server `Connecting`; `observer` is told of every state change
    /// (ready or error, later closed) as it happens. Must be called within
    /// a Tokio runtime.
    pub fn spawn(
        configs: Vec<ServerConfig>,
        workspace: &Path,
        observer: Option<StatusObserver>,
    ) -> McpManager {
        let http = http_client();
        let changes = Arc::new(watch::channel(0).0);
        let client = Arc::new(ClientShared::default());
        let servers: Vec<Arc<Server>> = configs
            .into_iter()
            .filter(|c| c.enabled)
            .map(|config| {
                let (changes, client) = (Arc::clone(&changes), Arc::clone(&client));
                Arc::new(Server::new(config, observer.clone(), changes, client))
            })
            .collect();
        if let Some(observer) = &observer {
            for server in &servers {
                observer(&server.status());
            }
        }
        let tasks = servers
            .iter()
            .map(|server| {
                let (server, workspace, http) =
                    (Arc::clone(server), workspace.to_path_buf(), http.clone());
                tokio::spawn(async move { crate::startup::run(server, &workspace, http).await })
            })
            .collect();
        McpManager { servers, changes, client, tasks: Mutex::new(tasks) }
    }

    /// Who answers the servers' sampling and elicitation requests from now
    /// on (see [`ClientHost`]); shared by every server of this manager.
    pub fn set_host(&self, host: Arc<dyn ClientHost>) {
        self.client.set_host(host);
    }

    /// Counts every change to any server (a state, a tool list): a registry
    /// built at one generation is out of date at another.
    pub fn generation(&self) -> u64 {
        *self.changes.borrow()
    }

    /// Waits until no server is still starting.
    pub async fn wait_for_all(&self) {
        let names: Vec<String> = self.servers.iter().map(|s| s.config.name.clone()).collect();
        self.wait_for(&names).await;
    }

    /// Waits until none of the servers named in `names` is still starting
    /// (unknown names are ignored). Bounded by their startup timeouts; the
    /// caller bounds it further (a grace, a cancellation) by dropping it.
    pub async fn wait_for(&self, names: &[String]) {
        let starting = || {
            self.servers
                .iter()
                .any(|s| names.contains(&s.config.name) && s.state() == ServerState::Connecting)
        };
        let mut changes = self.changes.subscribe();
        // A change between the check and the wait is still seen: the
        // receiver marks every version sent after it subscribed.
        while starting() {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// The names of the servers still starting.
    pub fn starting(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.state() == ServerState::Connecting)
            .map(|s| s.config.name.clone())
            .collect()
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// Adds the offered tools of every server that has connected to
    /// `registry` as `mcp_{server}_{tool}`; returns problems (tools whose
    /// schema does not compile) as warnings. A server that has since closed
    /// keeps its tools, so that a call tells the model it went away.
    pub fn register_tools(&self, registry: &mut ToolRegistry) -> Vec<String> {
        let mut names = ToolNames::new();
        let mut warnings = Vec::new();
        let connected =
            |s: &&Arc<Server>| matches!(s.state(), ServerState::Ready | ServerState::Closed);
        for server in self.servers.iter().filter(connected) {
            for tool in server.tools().iter().filter(|t| server.config.offers(&t.name)) {
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
            .filter(connected)
            .filter(|s| s.offers_resources())
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
            Some(s) => s.call(tool, arguments, None).await,
            None => ToolOutput::error(format!("no MCP server named '{server}' is configured")),
        }
    }

    /// Tools of `server` as `(name, description)`.
    pub fn tools_of(&self, server: &str) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter(|s| s.config.name == server)
            .flat_map(|s| {
                s.tools()
                    .iter()
                    .filter(|t| s.config.offers(&t.name))
                    .map(|t| {
                        (t.name.to_string(), t.description.as_deref().unwrap_or("").to_string())
                    })
                    .collect::<Vec<_>>()
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

    /// Stops the starts still under way, closes every session and kills
    /// every stdio server's process group.
    pub async fn shutdown(&self) {
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        for task in &tasks {
            task.abort();
        }
        // An aborted start has dropped what it held before this goes on.
        let _ = join_all(tasks).await;
        join_all(self.servers.iter().map(|server| async move {
            if let Some(mut service) = server.service.lock().await.take() {
                let _ = service.close_with_timeout(Duration::from_millis(500)).await;
            }
            server.kill();
            // A server that never started keeps its error.
            if !matches!(server.state(), ServerState::Error(_) | ServerState::NeedsLogin(_)) {
                server.set_state(ServerState::Closed);
            }
        }))
        .await;
    }

    /// Servers connected now.
    pub fn active(&self) -> usize {
        self.servers.iter().filter(|s| s.state() == ServerState::Ready).count()
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

    fn call<'a>(&'a self, ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.server.call(&self.tool, args, ctx.progress()).await) })
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
