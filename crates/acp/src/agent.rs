//! The agent side of ACP: reads the client's lines, answers its requests,
//! and opens one axon runtime session per `session/new` (or `load`,
//! `resume`).
//!
//! Requests are served concurrently (a long `session/prompt` never holds up
//! a `session/cancel` or another session); each session's order is the
//! runtime's. When the client closes its end, every session is cancelled
//! and shut down (its MCP servers and commands stopped) before `serve`
//! returns.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CloseSessionRequest, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, McpCapabilities, McpServer, NewSessionRequest, PromptCapabilities,
    PromptRequest, ResumeSessionRequest, SessionCapabilities, SessionCloseCapabilities,
    SessionInfo as AcpSessionInfo, SessionListCapabilities, SessionMode, SessionModeState,
    SessionResumeCapabilities, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use axon_protocol::{ApprovalMode, Mode, Op};
use axon_runtime::{
    DEFAULT_STARTUP_TIMEOUT, ServerConfig, SessionChoice, SessionConfig, Transport,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};

use crate::commands::{self, Command};
use crate::fs::EditorFiles;
use crate::rpc::{self, AUTH_REQUIRED, Incoming, METHOD_NOT_FOUND, Outgoing, Peer, RpcError};
use crate::session::{AcpSession, State};
use crate::{Log, Options, Outbound};

/// How long closing sessions may take once the client is gone, before the
/// caller kills what is left.
const CLOSE_GRACE: Duration = Duration::from_millis(800);

/// The modes an editor can pick, as `(id, name, description)`.
const MODES: [(&str, &str, &str); 4] = [
    ("ask", "Ask", "Ask before changing files or running commands"),
    ("auto", "Auto", "Change files and run commands without asking"),
    ("read-only", "Read only", "Read and answer; never change anything"),
    ("plan", "Plan", "Propose a plan first; run it once you approve"),
];

struct Agent {
    options: Options,
    link: Outbound,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

/// Serves ACP on `input`/`output` until the client closes `input`.
pub async fn serve<R, W>(options: Options, input: R, output: W, log: Log) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, writer) = Outgoing::start(output);
    let peer = Arc::new(Peer::new(out.clone()));
    let agent = Arc::new(Agent {
        options,
        link: Outbound { out: out.clone(), peer: Arc::clone(&peer), log },
        client: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match rpc::read_line(&mut input, &mut line).await {
            Ok(rpc::Line::End) => break,
            Ok(rpc::Line::TooLong) => {
                let error = RpcError::new(
                    rpc::INVALID_REQUEST,
                    format!("invalid request: a line longer than {} bytes", rpc::MAX_LINE),
                );
                out.respond(Value::Null, Err(error));
                continue;
            }
            Ok(rpc::Line::Read) => {}
            Err(e) => {
                (agent.link.log)(&format!("cannot read the client's input: {e}"));
                break;
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match rpc::parse(&line) {
            // Prompts are queued in the order they arrive: inline, not in a
            // task, so a `session/cancel` right after one finds it queued.
            Incoming::Request { id, method, params } if method == "session/prompt" => {
                if let Some(answer) = agent.prompt(&id, params) {
                    out.respond(id, answer);
                }
            }
            // A mode switch too: a prompt sent right after it runs in it.
            Incoming::Request { id, method, params } if method == "session/set_mode" => {
                out.respond(id, agent.set_mode(params));
            }
            // And a model switch.
            Incoming::Request { id, method, params } if method == "session/set_config_option" => {
                out.respond(id, agent.set_config_option(params));
            }
            Incoming::Request { id, method, params } => {
                let agent = Arc::clone(&agent);
                tokio::spawn(async move {
                    if let Some(answer) = agent.request(&id, &method, params).await {
                        agent.link.out.respond(id, answer);
                    }
                });
            }
            Incoming::Notification { method, params } => agent.notification(&method, params),
            Incoming::Response { id, result } => peer.settle(&id, result),
            Incoming::Invalid { id, error } => out.respond(id, Err(error)),
        }
    }
    peer.close();
    let sessions: Vec<Arc<AcpSession>> = {
        let mut map = agent.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        map.drain().map(|(_, s)| s).collect()
    };
    // Everything is cancelled at once, then closed side by side.
    for session in &sessions {
        session.cancel();
    }
    let mut closing = tokio::task::JoinSet::new();
    for session in sessions {
        closing.spawn(async move { session.close().await });
    }
    let _ = tokio::time::timeout(CLOSE_GRACE, closing.join_all()).await;
    drop(agent);
    drop(out);
    let _ = tokio::time::timeout(CLOSE_GRACE, writer).await;
    Ok(())
}

impl Agent {
    /// Answers one request; `None` when the answer is sent later (a
    /// prompt, answered when its turn ends).
    async fn request(
        self: &Arc<Self>,
        id: &Value,
        method: &str,
        params: Value,
    ) -> Option<Result<Value, RpcError>> {
        let answer = match method {
            "initialize" => self.initialize(params),
            "authenticate" => crate::auth::authenticate(params),
            "session/new" | "session/load" | "session/resume" => {
                let opened = match method {
                    "session/new" => self.new_session(params).await,
                    _ => self.load(params, method == "session/load").await,
                };
                return match opened {
                    Ok((answer, session)) => {
                        // The commands are published after the answer that
                        // names the session.
                        self.link.out.respond(id.clone(), Ok(answer));
                        session.notify(commands::available(session.info().as_ref()));
                        session.announced();
                        None
                    }
                    Err(e) => Some(Err(e)),
                };
            }
            "session/list" => self.list(params),
            "session/close" => self.close(params).await,
            "session/set_mode" => self.set_mode(params),
            "session/prompt" => return self.prompt(id, params),
            _ => Err(RpcError::new(METHOD_NOT_FOUND, format!("method not found: {method}"))),
        };
        Some(answer)
    }

    fn notification(&self, method: &str, params: Value) {
        if method == "session/cancel"
            && let Ok(cancel) = rpc::params::<CancelNotification>(params)
            && let Some(session) = self.session(&cancel.session_id.0)
        {
            session.cancel();
        }
    }

    fn session(&self, id: &str) -> Option<Arc<AcpSession>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    fn known_session(&self, id: &str) -> Result<Arc<AcpSession>, RpcError> {
        self.session(id).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown session {id}: open it with session/new or session/load first"
            ))
        })
    }

    fn initialize(&self, params: Value) -> Result<Value, RpcError> {
        let request: InitializeRequest = rpc::params(params)?;
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) =
            request.client_capabilities.clone();
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new().image(self.images()).audio(false).embedded_context(true),
            )
            .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        let response = InitializeResponse::new(1.into())
            .agent_capabilities(capabilities)
            .auth_methods(crate::auth::auth_methods())
            .agent_info(
                Implementation::new("axon", env!("CARGO_PKG_VERSION")).title("axon".to_string()),
            );
        to_value(&response)
    }

    /// Whether the model sessions would use takes images (unknown: yes;
    /// the provider says so if not).
    fn images(&self) -> bool {
        let Ok(mut config) = SessionConfig::load(&self.options.dir) else { return true };
        config.provider = self.options.provider.clone();
        config.model = self.options.model.clone();
        config.model().is_none_or(|(_, model)| axon_runtime::takes_images(&model))
    }

    async fn new_session(
        self: &Arc<Self>,
        params: Value,
    ) -> Result<(Value, Arc<AcpSession>), RpcError> {
        let request: NewSessionRequest = rpc::params(params)?;
        let id = axon_runtime::new_session_id();
        let session = self
            .open(&request.cwd, request.mcp_servers, SessionChoice::NewAs(id.clone()), false, &id)
            .await?;
        self.opened(&session);
        let options = crate::models::config_options_json(session.state().models.as_ref());
        Ok((
            json!({"sessionId": id, "modes": modes(&session.mode()), "configOptions": options}),
            session,
        ))
    }

    async fn load(
        self: &Arc<Self>,
        params: Value,
        replay: bool,
    ) -> Result<(Value, Arc<AcpSession>), RpcError> {
        let (id, cwd, servers) = if replay {
            let request: LoadSessionRequest = rpc::params(params)?;
            (request.session_id.0.to_string(), request.cwd, request.mcp_servers)
        } else {
            let request: ResumeSessionRequest = rpc::params(params)?;
            (request.session_id.0.to_string(), request.cwd, request.mcp_servers)
        };
        // The client may load a session it has open: the old one goes.
        // Only an exact id is a session here (the store also takes a
        // unique start of one, which would open one file twice).
        exact_session(&id)?;
        let open = self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        if let Some(open) = open {
            open.close().await;
        }
        let session = self.open(&cwd, servers, SessionChoice::Id(id.clone()), replay, &id).await?;
        self.opened(&session);
        let options = crate::models::config_options_json(session.state().models.as_ref());
        Ok((json!({"modes": modes(&session.mode()), "configOptions": options}), session))
    }

    /// A session is open: requests may name it. One it replaces (two
    /// loads of one id at once) is closed.
    fn opened(&self, session: &Arc<AcpSession>) {
        let replaced = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.id.clone(), Arc::clone(session));
        if let Some(replaced) = replaced {
            tokio::spawn(async move { replaced.close().await });
        }
    }

    async fn open(
        &self,
        cwd: &Path,
        servers: Vec<McpServer>,
        choice: SessionChoice,
        replay: bool,
        id: &str,
    ) -> Result<Arc<AcpSession>, RpcError> {
        let cwd = if cwd.is_absolute() { cwd.to_path_buf() } else { self.options.dir.join(cwd) };
        let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
        let mut config = SessionConfig::load(&cwd).map_err(|e| {
            RpcError::invalid_params(format!("cannot open {}: {e:#}", cwd.display()))
        })?;
        config.profile = self.options.profile.or(config.profile);
        config.provider = self.options.provider.clone();
        config.model = self.options.model.clone();
        config.max_iterations = self.options.max_iterations;
        config.sandbox = self.options.sandbox;
        config.interactive = true;
        // The editor shows every edit's diff, asked about or not.
        config.preview_actions = true;
        config.session = choice;
        config.replay_history = replay;
        config.client_servers = client_servers(servers)?;
        let client = self.client.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if client.fs.read_text_file || client.fs.write_text_file {
            let files = EditorFiles {
                session_id: id.to_string(),
                root: config.workspace.root().to_path_buf(),
                cwd: cwd.clone(),
                peer: Arc::clone(&self.link.peer),
                runtime: tokio::runtime::Handle::current(),
                read: client.fs.read_text_file,
                write: client.fs.write_text_file,
            };
            config.workspace = config.workspace.with_buffers(Arc::new(files));
        }
        let approval: ApprovalMode =
            config.approval().map_err(|e| RpcError::internal(format!("{e:#}")))?.into();
        let roots = crate::prompt::Roots { editor: cwd, workspace: config.workspace.clone() };
        let models = config.offered_models().await;
        let (emitter, mut events) = axon_runtime::channel();
        let session = match axon_runtime::open(config, emitter).await {
            Ok(session) => session,
            Err(e) => {
                while let Ok(event) = events.try_recv() {
                    if let axon_protocol::AgentEvent::Warning { message } = event {
                        (self.link.log)(&message);
                    }
                }
                let missing_key = e.chain().any(|cause| {
                    matches!(
                        cause.downcast_ref::<axon_runtime::LlmError>(),
                        Some(axon_runtime::LlmError::MissingKey { .. })
                    )
                });
                let code = if missing_key { AUTH_REQUIRED } else { rpc::INTERNAL_ERROR };
                return Err(RpcError::new(code, format!("{e:#}")));
            }
        };
        let notices = client.session.as_ref().is_some_and(|s| s.notices.is_some());
        // An axon-aware client (the VS Code extension) asks for the MCP
        // servers' states; others are sent nothing they did not ask for.
        let mcp_updates = client
            .meta
            .as_ref()
            .and_then(|meta| meta.get("axon"))
            .and_then(|axon| axon.get("mcpServers"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(AcpSession::start(
            id.to_string(),
            roots,
            session,
            events,
            State {
                mode: mode_id(approval, Mode::React).to_string(),
                models,
                notices,
                mcp_updates,
                ..State::default()
            },
            replay,
            &self.link,
        ))
    }

    fn list(&self, params: Value) -> Result<Value, RpcError> {
        let request: ListSessionsRequest = rpc::params(params)?;
        let dirs = axon_runtime::config::Dirs::from_env()
            .map_err(|e| RpcError::internal(format!("{e:#}")))?;
        let store = axon_runtime::SessionStore::new(&dirs.data);
        // Sessions record the workspace's canonical path.
        let cwd = request.cwd.map(|cwd| std::fs::canonicalize(&cwd).unwrap_or(cwd));
        let sessions = store
            .list(cwd.as_deref())
            .map_err(|e| RpcError::internal(e.to_string()))?
            .into_iter()
            .map(|s| {
                AcpSessionInfo::new(s.id, PathBuf::from(s.workspace))
                    .title(s.title)
                    .updated_at(rfc3339(s.updated_at))
            })
            .collect();
        to_value(&ListSessionsResponse::new(sessions))
    }

    async fn close(&self, params: Value) -> Result<Value, RpcError> {
        let request: CloseSessionRequest = rpc::params(params)?;
        let id = request.session_id.0.to_string();
        let session = self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        match session {
            Some(session) => {
                session.close().await;
                Ok(json!({}))
            }
            None => Err(RpcError::invalid_params(format!("unknown session {id}"))),
        }
    }

    fn set_config_option(&self, params: Value) -> Result<Value, RpcError> {
        let request: SetSessionConfigOptionRequest = rpc::params(params)?;
        let session = self.known_session(&request.session_id.0)?;
        crate::models::set_config_option(&session, request)
    }

    fn set_mode(&self, params: Value) -> Result<Value, RpcError> {
        let request: SetSessionModeRequest = rpc::params(params)?;
        let session = self.known_session(&request.session_id.0)?;
        let mode = request.mode_id.0.to_string();
        let (approval, plan) = match mode.as_str() {
            "ask" => (Some(ApprovalMode::Ask), false),
            "auto" => (Some(ApprovalMode::Auto), false),
            "read-only" => (Some(ApprovalMode::ReadOnly), false),
            // Plan mode in a read-only session could run no step: the
            // plan's steps ask instead.
            "plan" if session.mode() == "read-only" => (Some(ApprovalMode::Ask), true),
            "plan" => (None, true),
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown mode `{other}`: use ask, auto, read-only or plan"
                )));
            }
        };
        switch_mode(&session, &mode, approval, plan);
        Ok(json!({}))
    }

    /// Starts a prompt's work; the answer is sent when its turn ends.
    fn prompt(&self, id: &Value, params: Value) -> Option<Result<Value, RpcError>> {
        let request: PromptRequest = match rpc::params(params) {
            Ok(request) => request,
            Err(e) => return Some(Err(e)),
        };
        let session = match self.known_session(&request.session_id.0) {
            Ok(session) => session,
            Err(e) => return Some(Err(e)),
        };
        let (text, attachments) = crate::prompt::prompt_parts(&request.prompt, &session.roots);
        let info = session.info();
        let op = match commands::parse(&text, info.as_ref()) {
            None => Op::UserTurn { text, attachments },
            Some(Command::Compact) => Op::Compact,
            Some(Command::Background) => {
                let text = axon_protocol::background_text(&session.background_commands());
                session.notify(crate::updates::message_chunk(&text));
                return Some(Ok(json!({"stopReason": "end_turn"})));
            }
            Some(Command::Show(text)) => {
                session.notify(crate::updates::message_chunk(&text));
                return Some(Ok(json!({"stopReason": "end_turn"})));
            }
            Some(Command::Plan(task)) => {
                let approval = (session.mode() == "read-only").then_some(ApprovalMode::Ask);
                switch_mode(&session, "plan", approval, true);
                if task.is_empty() {
                    session.notify(crate::updates::message_chunk(
                        "Plan mode: the next prompt gets a plan to approve before anything changes.",
                    ));
                    return Some(Ok(json!({"stopReason": "end_turn"})));
                }
                Op::UserTurn { text: task, attachments }
            }
            Some(Command::Skill { name, task }) => {
                Op::UserTurn { text: commands::skill_prompt(&name, &task), attachments }
            }
        };
        session.prompt(id.clone(), op);
        None
    }
}

/// Switches a session's mode and tells the editor.
fn switch_mode(session: &AcpSession, mode: &str, approval: Option<ApprovalMode>, plan: bool) {
    if let Some(approval) = approval {
        session.submit(Op::SetApproval { approval });
    }
    session.submit(Op::SetMode { mode: if plan { Mode::Plan } else { Mode::React } });
    session.set_mode(mode);
    session.notify(agent_client_protocol_schema::v1::SessionUpdate::CurrentModeUpdate(
        agent_client_protocol_schema::v1::CurrentModeUpdate::new(mode.to_string()),
    ));
}

/// The mode id of a session's approval policy and mode.
fn mode_id(approval: ApprovalMode, mode: Mode) -> &'static str {
    match (mode, approval) {
        (Mode::Plan, _) => "plan",
        (Mode::React, ApprovalMode::Ask) => "ask",
        (Mode::React, ApprovalMode::Auto) => "auto",
        (Mode::React, ApprovalMode::ReadOnly) => "read-only",
    }
}

fn modes(current: &str) -> Value {
    let available: Vec<SessionMode> = MODES
        .iter()
        .map(|(id, name, description)| {
            SessionMode::new(id.to_string(), name.to_string()).description(description.to_string())
        })
        .collect();
    serde_json::to_value(SessionModeState::new(current.to_string(), available))
        .unwrap_or(Value::Null)
}

/// The editor's MCP servers as axon's server configs.
fn client_servers(servers: Vec<McpServer>) -> Result<Vec<ServerConfig>, RpcError> {
    servers
        .into_iter()
        .map(|server| {
            let (name, transport) = match server {
                McpServer::Stdio(stdio) => (
                    stdio.name,
                    Transport::Stdio {
                        command: stdio.command.to_string_lossy().into_owned(),
                        args: stdio.args,
                        env: stdio.env.into_iter().map(|v| (v.name, v.value)).collect(),
                        cwd: None,
                    },
                ),
                McpServer::Http(http) => (
                    http.name,
                    Transport::Http {
                        url: http.url,
                        headers: http.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                        bearer_token_env: None,
                        oauth: Default::default(),
                    },
                ),
                McpServer::Sse(sse) => {
                    return Err(RpcError::invalid_params(format!(
                        "MCP server {}: the SSE transport is not supported; use streamable HTTP",
                        sse.name
                    )));
                }
                _ => {
                    return Err(RpcError::invalid_params("an MCP server of an unknown transport"));
                }
            };
            Ok(ServerConfig {
                name,
                transport,
                enabled: true,
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                tool_timeout: None,
                enabled_tools: None,
                disabled_tools: Vec::new(),
                source: "the editor".to_string(),
                sandbox: Default::default(),
            })
        })
        .collect()
}

/// `id` names a stored session exactly (not the start of one).
fn exact_session(id: &str) -> Result<(), RpcError> {
    let unknown = || RpcError::invalid_params(format!("unknown session {id}"));
    let dirs =
        axon_runtime::config::Dirs::from_env().map_err(|e| RpcError::internal(format!("{e:#}")))?;
    axon_runtime::SessionStore::new(&dirs.data).find_exact(id).map(|_| ()).ok_or_else(unknown)
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(e.to_string()))
}

/// Milliseconds since the epoch as an RFC 3339 UTC time.
fn rfc3339(ms: i64) -> String {
    let axon_runtime::Utc { year, month, day, hour, minute, second } =
        axon_runtime::Utc::from_ms(ms);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn modes_name_approval_and_plan() {
        assert_eq!(mode_id(ApprovalMode::Auto, Mode::React), "auto");
        assert_eq!(mode_id(ApprovalMode::ReadOnly, Mode::React), "read-only");
        assert_eq!(mode_id(ApprovalMode::Ask, Mode::Plan), "plan");
    }
}
