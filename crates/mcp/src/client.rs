//! Connecting to one MCP server, and answering what servers ask of a client.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

#[allow(deprecated)]
// roots and sampling are deprecated in the newest spec, still used by servers
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, Implementation, ListRootsResult,
    ProgressNotificationParam, ProtocolVersion, Root,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use crate::config::{ServerConfig, Transport};
use crate::host::ClientShared;

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

/// Which of its lists a ready server announced changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListChanged {
    Tools,
    Prompts,
    Resources,
}

/// Why a server could not be started, and whether trying again could help
/// (a server that crashed or hung may start the second time; a command
/// that does not exist never will).
#[derive(Debug)]
pub(crate) struct StartError {
    pub message: String,
    pub permanent: bool,
}

impl StartError {
    fn permanent(message: String) -> Self {
        StartError { message, permanent: true }
    }
}

impl From<String> for StartError {
    fn from(message: String) -> Self {
        StartError { message, permanent: false }
    }
}

/// What a client tells servers about itself, and how it answers them.
#[derive(Clone)]
pub(crate) struct Handler {
    config: ClientConfig,
    root_uri: String,
    /// The server's name, as the host and progress routes know it.
    server: String,
    shared: Arc<ClientShared>,
    notices: mpsc::UnboundedSender<ListChanged>,
}

impl Handler {
    fn new(
        workspace: &Path,
        server: &str,
        shared: Arc<ClientShared>,
        notices: mpsc::UnboundedSender<ListChanged>,
    ) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(Default::default());
        capabilities.roots = Some(Default::default());
        #[allow(deprecated)] // still what servers ask through
        {
            capabilities.sampling = Some(Default::default());
        }
        let config =
            ClientConfig::new(capabilities, Implementation::new("axon", env!("CARGO_PKG_VERSION")))
                // The newest version that has an initialize handshake; servers
                // answer with theirs and the session uses that.
                .with_protocol_version(ProtocolVersion::V_2025_11_25);
        Handler {
            config,
            root_uri: format!("file://{}", workspace.display()),
            server: server.to_string(),
            shared,
            notices,
        }
    }

    fn notice(&self, notice: ListChanged) {
        // Nobody listens once the manager is gone; nothing to tell then.
        let _ = self.notices.send(notice);
    }
}

#[allow(deprecated)] // roots are deprecated in the newest spec, still used by servers
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    /// The host asks the user; when nobody can answer, the form is
    /// accepted with the defaults it declares, or declined without any.
    /// The server withdrawing its request ends the wait.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        tokio::select! {
            result = crate::requests::elicit(&self.shared, &self.server, request) => result,
            () = context.ct.cancelled() => Err(ErrorData::internal_error("the request was cancelled", None)),
        }
    }

    /// Answered by the host's model after its consent; refused when no host
    /// is set or it refuses.
    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        tokio::select! {
            result = crate::requests::sample(&self.shared, &self.server, request) => result,
            () = context.ct.cancelled() => Err(ErrorData::internal_error("the request was cancelled", None)),
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let progress = axon_tools::Progress {
            message: params.message,
            progress: params.progress,
            total: params.total,
        };
        self.shared.progress(&self.server, params.progress_token, progress);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(ListChanged::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(ListChanged::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(ListChanged::Resources);
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
}

/// Starts (stdio) or reaches (HTTP) a server and runs the initialize
/// handshake. A started process group is recorded in `spawned` at once, for
/// the caller to kill if the handshake fails or is abandoned.
pub(crate) async fn connect(
    config: &ServerConfig,
    workspace: &Path,
    http: &Result<reqwest::Client, String>,
    stderr: StderrTail,
    spawned: &Arc<Mutex<Spawned>>,
    shared: &Arc<ClientShared>,
    notices: mpsc::UnboundedSender<ListChanged>,
) -> Result<Connection, StartError> {
    let handler = Handler::new(workspace, &config.name, Arc::clone(shared), notices);
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            // A relative cwd is relative to the workspace, not to axon's own.
            let dir = match cwd {
                Some(dir) if dir.is_relative() => workspace.join(dir),
                Some(dir) => dir.clone(),
                None => workspace.to_path_buf(),
            };
            let started =
                crate::spawn::start(&config.name, command, args, env, &dir, &config.sandbox)
                    .map_err(StartError::permanent)?;
            let process_group = started.group;
            if let Some(group) = process_group {
                axon_process::guard_group(group);
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
                Ok(message) = &mut not_mcp => return Err(StartError::permanent(message)),
            };
            // The SDK may see the stream end before the verdict is read.
            let service = served.map_err(|e| match not_mcp.try_recv() {
                Ok(message) => StartError::permanent(message),
                Err(_) => StartError::from(e.to_string()),
            })?;
            Ok(Connection { service })
        }
        Transport::Http { url, headers, bearer_token_env, oauth } => {
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            if let Some(var) = bearer_token_env {
                let token = std::env::var(var).map_err(|_| {
                    StartError::permanent(format!("the bearer token variable {var} is not set"))
                })?;
                transport_config = transport_config.auth_header(token);
            }
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| StartError::permanent(format!("header name '{name}': {e}")))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| StartError::permanent(format!("header '{name}': {e}")))?;
                custom.insert(name, value);
            }
            transport_config = transport_config.custom_headers(custom);
            let mut retry = rmcp::transport::common::client_side_sse::ExponentialBackoff::default();
            retry.max_times = Some(5);
            retry.max_delay = Some(Duration::from_secs(30));
            transport_config.retry_config = Arc::new(retry);
            let http = crate::http_client::OrderedClient::new(
                http.clone().map_err(StartError::permanent)?,
            );
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
            Ok(Connection { service })
        }
    }
}
