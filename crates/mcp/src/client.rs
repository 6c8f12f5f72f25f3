//! Connecting to one MCP server, and answering what servers ask of a client.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
#[allow(deprecated)] // roots are deprecated in the newest spec, still used by servers
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, ListRootsResult, ProtocolVersion, Root,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::config::{ServerConfig, Transport};

/// Lines of a server's stderr kept for error reports.
const STDERR_LINES: usize = 20;

/// The last lines a server wrote to stderr.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

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
) -> Result<Connection, String> {
    let handler = Handler::new(workspace);
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let dir = cwd.clone().unwrap_or_else(|| workspace.to_path_buf());
            let mut wrapped = CommandWrap::with_new(command, |c| {
                c.args(args).envs(env).current_dir(&dir);
            });
            // Signals reach everything the server started (npx, node, …).
            #[cfg(unix)]
            wrapped.wrap(ProcessGroup::leader());
            let (transport, pipe) = TokioChildProcess::builder(wrapped)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            let process_group = transport.id();
            if let Some(pipe) = pipe {
                // Drained to the end, or the server blocks on a full pipe.
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(pipe).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let mut tail = stderr.lock().unwrap_or_else(PoisonError::into_inner);
                        if tail.len() == STDERR_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line);
                    }
                });
            }
            let service = handler.serve(transport).await.map_err(|e| e.to_string())?;
            Ok(Connection { service, process_group })
        }
        Transport::Http { url, headers, bearer_token_env } => {
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
            let http = http.clone()?;
            let transport = StreamableHttpClientTransport::with_client(http, transport_config);
            let service = handler.serve(transport).await.map_err(|e| e.to_string())?;
            Ok(Connection { service, process_group: None })
        }
    }
}
