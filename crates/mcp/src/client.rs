//! Connecting to one MCP server, and answering what servers ask of a client.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

#[allow(deprecated)] // roots are deprecated in the newest spec, still used by servers
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, ListRootsResult, ProtocolVersion, Root,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::config::{ServerConfig, Transport};

/// Lines of a server's stderr kept for error reports.
const STDERR_LINES: usize = 20;

/// The last lines a server wrote to stderr.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;
/// Longest stderr line kept; longer ones are cut.
const MAX_STDERR_LINE: u64 = 4096;

/// What is known of a stdio server's processes from the moment it is
/// spawned, so one that fails later can still be cleaned up.
#[derive(Default)]
pub(crate) struct Spawned {
    pub group: Option<u32>,
    pub stderr_reader: Option<tokio::task::JoinHandle<()>>,
    /// Whether an HTTP server refused axon for want of a (valid) token.
    pub login: crate::auth::LoginWatch,
}

pub(crate) fn tail_text(tail: &StderrTail) -> String {
    let lines = tail.lock().unwrap_or_else(PoisonError::into_inner);
    lines.iter().cloned().collect::<Vec<_>>().join("\n")
}

/// What a client tells servers about itself, and how it answers them.
#[derive(Clone)]
pub(crate) struct Handler {
    config: ClientConfig,
    root_uri: String,
}

impl Handler {
    fn new(workspace: &Path) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(Default::default());
        capabilities.roots = Some(Default::default());
        let config =
            ClientConfig::new(capabilities, Implementation::new("axon", env!("CARGO_PKG_VERSION")))
                // The newest version that has an initialize handshake; servers
                // answer with theirs and the session uses that.
                .with_protocol_version(ProtocolVersion::V_2025_11_25);
        Handler { config, root_uri: format!("file://{}", workspace.display()) }
    }
}

#[allow(deprecated)] // roots are deprecated in the newest spec, still used by servers
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    /// Nobody is there to fill in a form while the agent works: accept with
    /// the defaults the form declares, or decline when it has none.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let defaults: serde_json::Map<String, serde_json::Value> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(name, property)| {
                property.get("default").map(|d| (name.clone(), d.clone()))
            })
            .collect();
        if defaults.is_empty() {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(defaults.into()))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(self.root_uri.clone()).with_name("workspace")]))
    }
}

/// Keeps the last lines of a server's stderr, reading to the end so the
/// server never blocks on a full pipe; bytes that are not UTF-8 and very
/// long lines are tolerated.
async fn drain_stderr(pipe: tokio::process::ChildStderr, tail: StderrTail) {
    use tokio::io::AsyncReadExt;
    let mut reader = tokio::io::BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_STDERR_LINE).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                let mut kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(text);
            }
        }
    }
}

/// A live session with one server.
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, Handler>,
    /// The process group of a stdio server (its leader's pid).
    pub process_group: Option<u32>,
}

/// Starts (stdio) or reaches (HTTP) a server and runs the initialize
/// handshake. Dropping the future mid-way kills a started process group.
pub(crate) async fn connect(
    config: &ServerConfig,
    workspace: &Path,
    http: &Result<reqwest::Client, String>,
    stderr: StderrTail,
    spawned: Arc<Mutex<Spawned>>,
) -> Result<Connection, String> {
    let handler = Handler::new(workspace);
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            // A relative cwd is relative to the workspace, not to axon's own.
            let dir = match cwd {
                Some(dir) if dir.is_relative() => workspace.join(dir),
                Some(dir) => dir.clone(),
                None => workspace.to_path_buf(),
            };
            let started =
                crate::spawn::start(&config.name, command, args, env, &dir, &config.sandbox)?;
            let process_group = started.group;
            if let Some(group) = process_group {
                axon_tools::process::guard_group(group);
            }
            let reader = started.stderr.map(|pipe| tokio::spawn(drain_stderr(pipe, stderr)));
            {
                let mut known = spawned.lock().unwrap_or_else(PoisonError::into_inner);
                known.group = process_group;
                known.stderr_reader = reader;
            }
            // A server whose first line is not JSON-RPC fails now, not at
            // the startup timeout.
            let mut not_mcp = started.not_mcp;
            let served = tokio::select! {
                served = handler.serve(started.transport) => served,
                Ok(message) = &mut not_mcp => return Err(message),
            };
            // The SDK may see the stream end before the verdict is read.
            let service =
                served.map_err(|e| not_mcp.try_recv().unwrap_or_else(|_| e.to_string()))?;
            Ok(Connection { service, process_group })
        }
        Transport::Http { url, headers, bearer_token_env, oauth } => {
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            if let Some(var) = bearer_token_env {
                let token = std::env::var(var)
                    .map_err(|_| format!("the bearer token variable {var} is not set"))?;
                transport_config = transport_config.auth_header(token);
            }
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header name '{name}': {e}"))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| format!("header '{name}': {e}"))?;
                custom.insert(name, value);
            }
            transport_config = transport_config.custom_headers(custom);
            let mut retry = rmcp::transport::common::client_side_sse::ExponentialBackoff::default();
            retry.max_times = Some(5);
            retry.max_delay = Some(Duration::from_secs(30));
            transport_config.retry_config = Arc::new(retry);
            let http = crate::http_client::OrderedClient::new(http.clone()?);
            let service = if bearer_token_env.is_some() {
                let transport = StreamableHttpClientTransport::with_client(http, transport_config);
                handler.serve(transport).await.map_err(|e| e.to_string())?
            } else {
                // Signed in with OAuth, or not at all: the server's 401 says
                // which it needs.
                let login = spawned.lock().unwrap_or_else(PoisonError::into_inner).login.clone();
                if let Some(dir) = &oauth.token_dir {
                    login.keep_challenges_at(crate::auth::challenge_path(dir, &config.name, url));
                }
                let client = crate::auth::authorized_client(
                    &config.name,
                    url,
                    oauth,
                    http.watched(login.clone()),
                )
                .await?;
                let transport =
                    StreamableHttpClientTransport::with_client(client, transport_config);
                handler.serve(transport).await.map_err(|e| {
                    if login.refused() {
                        crate::auth::needs_login_message(&config.name)
                    } else {
                        e.to_string()
                    }
                })?
            };
            Ok(Connection { service, process_group: None })
        }
    }
}
