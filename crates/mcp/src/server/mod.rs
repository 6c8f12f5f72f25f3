//! axon as an MCP server: a [`ToolRegistry`] served to any MCP host.
//!
//! [`ToolServer`] is the `rmcp` handler. Every call goes through the same
//! [`ToolRegistry::call`] the agent uses, so a host gets the same schema
//! validation, the same workspace jail and the same error messages the model
//! gets. Transports live beside it: [`serve_stdio`] here and the HTTP layer in
//! [`http`], which any `rmcp` handler can use (the conformance fixtures do).
//!
//! Invariants:
//! - A call's progress notifications are all sent before its result
//!   ([`progress::Reporter::finish`] is awaited first), so a host that drops
//!   its progress handler on the result loses none.
//! - A cancelled call (`notifications/cancelled`) has its future dropped,
//!   which kills whatever the tool started (the shell's process group).
//! - At most [`MAX_CONCURRENT_CALLS`] calls run at once across all sessions;
//!   a storm of requests queues instead of spawning without bound.

pub mod http;
mod jsonrpc;
mod logging;
mod progress;
pub mod sessions;
pub mod stdio;

use std::sync::Arc;
use std::time::Instant;

use axon_protocol::{ContentPart, ToolOutput, ToolSpec};
use axon_tools::{ToolContext, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::Semaphore;

pub use logging::LogLevel;

/// Calls running at once across every session of one server.
pub const MAX_CONCURRENT_CALLS: usize = 64;

/// What one server serves; shared by all its sessions.
struct Served {
    registry: Arc<ToolRegistry>,
    context: ToolContext,
    /// The registry's tools as MCP sees them, converted once.
    tools: Arc<Vec<Tool>>,
    instructions: String,
    permits: Semaphore,
    /// Whether secrets in results are masked before the host (and its
    /// model) gets them (`secrets = "redact"`, the default).
    mask_secrets: bool,
}

/// The `rmcp` handler for one session. Cheap to make: [`ToolServer::session`]
/// gives each new session its own logging level over the shared registry.
#[derive(Clone)]
pub struct ToolServer {
    shared: Arc<Served>,
    log: logging::Logger,
}

impl ToolServer {
    /// Serves `registry`'s tools, each call running with `context`.
    /// `instructions` tells hosts what the server is for. With
    /// `mask_secrets`, each result's secrets are masked
    /// (`axon_tools::secret_mask`) and the host told by a log message.
    pub fn new(
        registry: Arc<ToolRegistry>,
        context: ToolContext,
        instructions: String,
        mask_secrets: bool,
    ) -> Self {
        let tools = Arc::new(registry.specs().map(mcp_tool).collect());
        ToolServer {
            shared: Arc::new(Served {
                registry,
                context,
                tools,
                instructions,
                permits: Semaphore::new(MAX_CONCURRENT_CALLS),
                mask_secrets,
            }),
            log: logging::Logger::default(),
        }
    }

    /// A handler for a new session: same tools, its own logging level.
    pub fn session(&self) -> Self {
        ToolServer { shared: Arc::clone(&self.shared), log: logging::Logger::default() }
    }

    async fn run_call(
        &self,
        name: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolOutput, McpError> {
        let cancelled = || {
            McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the call to '{name}' was cancelled"),
                None,
            )
        };
        // A call cancelled while it waits for a slot, or before it starts,
        // never runs.
        let permit = tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(cancelled()),
            permit = self.shared.permits.acquire() => permit,
        };
        let Ok(_permit) = permit else {
            return Err(McpError::internal_error("the server is shutting down", None));
        };
        let reporter = context
            .meta
            .get_progress_token()
            .map(|token| progress::Reporter::start(context.peer.clone(), token));
        let call_context = match &reporter {
            Some(reporter) => self.shared.context.with_progress(reporter.sink()),
            None => self.shared.context.clone(),
        };
        self.log.send(&context.peer, LogLevel::Debug, name, "started", None).await;
        let started = Instant::now();
        // What the masking notice needs of the arguments: the file a
        // result's numbered lines belong to.
        let args_seen = match args.get("path") {
            Some(path) => serde_json::json!({ "path": path }),
            None => Value::Null,
        };
        let output = {
            let call = self.shared.registry.call(&call_context, name, args);
            let heartbeat = progress::heartbeat(reporter.as_ref(), name);
            tokio::select! {
                biased;
                () = context.ct.cancelled() => None,
                output = call => Some(output),
                () = heartbeat => None,
            }
        };
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        let Some(mut output) = output else {
            self.log.send(&context.peer, LogLevel::Info, name, "cancelled", None).await;
            return Err(cancelled());
        };
        if self.shared.mask_secrets
            && let Some(notice) =
                axon_tools::secret_mask::mask_output(name, &args_seen, &mut output)
        {
            self.log.send(&context.peer, LogLevel::Warning, name, &notice, None).await;
        }
        let elapsed = started.elapsed();
        if output.is_error {
            let first_line = output.text_content().lines().next().unwrap_or_default().to_string();
            self.log.send(&context.peer, LogLevel::Warning, name, &first_line, Some(elapsed)).await;
        } else {
            self.log.send(&context.peer, LogLevel::Debug, name, "finished", Some(elapsed)).await;
        }
        Ok(output)
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(Default::default());
        capabilities.logging = Some(JsonObject::new());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("axon", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.shared.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        if !self.shared.registry.contains(name) {
            let known: Vec<&str> = self.shared.registry.names().collect();
            return Err(McpError::invalid_params(
                format!("unknown tool '{name}'; this server has: {}", known.join(", ")),
                None,
            ));
        }
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let output = self.run_call(name, args, &context).await?;
        Ok(call_result(output).into())
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but hosts still use it
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log.set(request.level.into());
        Ok(())
    }
}

/// Serves `server` over this process's stdin and stdout until the host
/// closes them. Invalid requests are answered with their id
/// ([`stdio::LineTransport`]).
pub async fn serve_stdio(server: impl ServerHandler) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    serve_lines(server, stdin, stdout).await
}

/// Serves `server` over any byte stream pair, one JSON-RPC message a line.
pub async fn serve_lines<R, W>(
    server: impl ServerHandler,
    read: R,
    write: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let running = server
        .serve(stdio::LineTransport::new(read, write))
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    running.waiting().await.map_err(|e| ServeError::Stopped(e.to_string()))?;
    Ok(())
}

/// Why a server could not start or stopped unexpectedly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP server stopped unexpectedly: {0}")]
    Stopped(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: std::net::SocketAddr, source: std::io::Error },
    #[error(transparent)]
    Exposure(#[from] axon_guard::Exposure),
    #[error("the HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// A registry spec as an MCP tool, hints included.
fn mcp_tool(spec: &ToolSpec) -> Tool {
    let schema: JsonObject = match &spec.input_schema {
        Value::Object(object) => object.clone(),
        _ => JsonObject::from_iter([("type".to_string(), Value::from("object"))]),
    };
    let hints = &spec.annotations;
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = Some(hints.read_only);
    if !hints.read_only {
        annotations.destructive_hint = Some(hints.destructive);
        annotations.idempotent_hint = Some(hints.idempotent);
    }
    Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema))
        .with_annotations(annotations)
}

/// A tool output as an MCP result: an error output is `isError: true` with
/// the same text the model would read.
pub fn call_result(output: ToolOutput) -> CallToolResult {
    let content: Vec<ContentBlock> = output
        .content
        .into_iter()
        .map(|part| match part {
            ContentPart::Text { text } | ContentPart::Thinking { text, .. } => {
                ContentBlock::text(text)
            }
            ContentPart::Image { media_type, data } => ContentBlock::image(data, media_type),
            ContentPart::Audio { media_type, data } => ContentBlock::audio(data, media_type),
        })
        .collect();
    if output.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
}
