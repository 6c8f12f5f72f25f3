//! Which MCP servers a session starts, and how their states are reported.
//!
//! The user's own servers always start. A workspace's (its
//! `.axon/config.toml` and `.mcp.json`) are commands a repository asks to
//! run: they start only with the user's consent, and never in a read-only
//! session. A yes at the terminal (or `axon mcp trust NAME`) is remembered
//! in the workspace's trust file under the user's data folder, for exactly
//! what the server runs: a changed command, argument, variable or URL is
//! asked about again.

use std::path::Path;
use std::sync::Arc;

use axon_core::ApprovalPolicy;
use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{ServerState, ServerStatus};
use axon_protocol::{AgentEvent, McpServerInfo, McpState};

use crate::events::Emitter;

/// Asks the user whether a workspace server may start; gets the server and
/// a description of everything it would run or send.
pub type AskConsent = Arc<dyn Fn(&ServerConfig, &str) -> bool + Send + Sync>;

/// Whether the workspace's own MCP servers start.
#[derive(Clone)]
pub enum ServerConsent {
    /// All of them (the user said so up front, e.g. `--yes`). Only in the
    /// first session ever opened in a workspace, when no command axon ran
    /// can have written them; it trusts what it allows. In every later
    /// session `--yes` is [`ServerConsent::AllowTrusted`] (see
    /// [`ServerConsent::settle`]).
    Allow,
    /// `--yes` in a workspace where any session ran before: the ones
    /// trusted as they are now; one that is new or changed since, or was
    /// never allowed (a command of an earlier session, asked or not, may
    /// have written it: `.mcp.json` and `.claude/settings.json` are
    /// ordinary files to a command when they did not exist) is left out,
    /// with how to allow it.
    AllowTrusted,
    /// None; each one skipped is reported with how to allow it.
    Refuse,
    /// Ask about each.
    Ask(AskConsent),
}

impl ServerConsent {
    /// What `self` means in `workspace` this session: `Allow` where any
    /// session ran before is [`ServerConsent::AllowTrusted`]. Answers
    /// whether this is the first session here (of any kind: a command of
    /// an unasked, sandboxed session can plant a server as well as one
    /// under `--yes`), whose end of set-up must call
    /// [`TrustStore::mark_baseline`].
    pub fn settle(self, store: TrustStore<'_>) -> (ServerConsent, bool) {
        let first = !store.baseline();
        match self {
            ServerConsent::Allow if !first => (ServerConsent::AllowTrusted, false),
            other => (other, first),
        }
    }
}

/// Where consent is remembered: the user's data folder and the
/// workspace's root.
#[derive(Clone, Copy)]
pub struct TrustStore<'a> {
    pub data: &'a Path,
    pub workspace: &'a Path,
}

impl TrustStore<'_> {
    /// Whether any session has run in this workspace since axon began
    /// keeping this record (from then on `--yes` covers only what the user
    /// trusted).
    pub fn baseline(&self) -> bool {
        axon_permissions::Trust::load(self.data, self.workspace).is_ok_and(|t| t.yes_baseline)
    }

    /// Records that a session ran here: from now on `--yes` covers only
    /// what the user trusted (or a first `--yes` session ran, trusted as it
    /// was then).
    pub fn mark_baseline(&self) -> Result<(), String> {
        axon_permissions::Trust::update(self.data, self.workspace, |trust| {
            trust.yes_baseline = true;
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    /// The trust file's remembered description of server `name`.
    fn remembered(&self, name: &str) -> Option<String> {
        axon_permissions::Trust::load(self.data, self.workspace)
            .ok()
            .and_then(|trust| trust.mcp_servers.get(name).cloned())
    }

    /// What consent is remembered for: everything [`describe`] shows, and
    /// the content of every file inside the workspace that the command or
    /// its arguments name (a script the repository ships, such as
    /// `node tools/mcp.js`), so a server whose code changed, by a commit or
    /// by a command, is asked about again.
    fn fingerprint(&self, server: &ServerConfig) -> String {
        use sha2::{Digest, Sha256};
        let mut text = describe(server);
        let Transport::Stdio { command, args, cwd, .. } = &server.transport else {
            return text;
        };
        let base = match cwd {
            Some(dir) if dir.is_relative() => self.workspace.join(dir),
            Some(dir) => dir.clone(),
            None => self.workspace.to_path_buf(),
        };
        for word in std::iter::once(command).chain(args) {
            let Ok(path) = std::fs::canonicalize(base.join(word)) else { continue };
            if !path.starts_with(self.workspace) || !path.is_file() {
                continue;
            }
            let digest = match std::fs::read(&path) {
                Ok(bytes) => Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect(),
                Err(e) => format!("unreadable ({e})"),
            };
            text.push_str(&format!(" file {word:?} sha256 {digest}"));
        }
        text
    }

    /// Whether the user trusted `server` as it is now.
    pub fn trusts(&self, server: &ServerConfig) -> bool {
        self.remembered(&server.name).as_deref() == Some(self.fingerprint(server).as_str())
    }

    /// Remembers that the user trusts `server` as it is now.
    pub fn trust(&self, server: &ServerConfig) -> Result<(), String> {
        let description = self.fingerprint(server);
        axon_permissions::Trust::update(self.data, self.workspace, |trust| {
            trust.trust_server(&server.name, &description)
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
    }
}

/// The servers to start: the user's, and the workspace's the user allowed
/// (now, or earlier for exactly what they run).
pub fn servers_to_start(
    approval: ApprovalPolicy,
    consent: &ServerConsent,
    user: Vec<ServerConfig>,
    workspace: Vec<ServerConfig>,
    events: &Emitter,
    store: TrustStore<'_>,
) -> Vec<ServerConfig> {
    let mut servers = user;
    for server in workspace {
        let description = describe(&server);
        let remembered = store.remembered(&server.name);
        let trusted = remembered.as_deref() == Some(store.fingerprint(&server).as_str());
        let allowed = match consent {
            ServerConsent::Allow => {
                if !trusted && let Err(e) = store.trust(&server) {
                    events.emit(AgentEvent::Warning {
                        message: format!(
                            "MCP server {} starts, but your consent could not be remembered: {e}",
                            server.name
                        ),
                    });
                }
                true
            }
            ServerConsent::AllowTrusted if trusted => true,
            ServerConsent::AllowTrusted => {
                events.emit(AgentEvent::Warning {
                    message: format!(
                        "MCP server {} from {} is not covered by --yes: it is new or changed since a \
                         session here last ran, and a command may have written it; allow it as it \
                         is now with `axon mcp trust {}`",
                        server.name, server.source, server.name
                    ),
                });
                false
            }
            _ if trusted && approval != ApprovalPolicy::ReadOnly => true,
            ServerConsent::Ask(ask) if approval != ApprovalPolicy::ReadOnly => {
                let description = match remembered {
                    Some(_) => format!("{description}; CHANGED since you allowed it"),
                    None => description,
                };
                let yes = ask(&server, &description);
                if yes && let Err(e) = store.trust(&server) {
                    events.emit(AgentEvent::Warning {
                        message: format!(
                            "MCP server {} starts, but your consent could not be remembered: {e}",
                            server.name
                        ),
                    });
                }
                yes
            }
            ServerConsent::Ask(_) | ServerConsent::Refuse => {
                events.emit(AgentEvent::Warning {
                    message: format!(
                        "MCP server {} from {} was not started: workspace servers run commands; allow \
                         it as it is now with `axon mcp trust {}`",
                        server.name, server.source, server.name
                    ),
                });
                false
            }
        };
        if allowed {
            servers.push(server);
        }
    }
    servers
}

/// Everything about a server that decides what it runs or where secrets go,
/// quoted so control characters cannot disguise it.
pub fn describe(server: &ServerConfig) -> String {
    let sandboxed = if server.sandbox == axon_mcp::config::ServerSandbox::Off {
        ""
    } else {
        " (in the sandbox)"
    };
    let transport = match &server.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut text = format!("command {command:?} args {args:?}");
            if !env.is_empty() {
                text.push_str(&format!(" env {env:?}"));
            }
            if let Some(cwd) = cwd {
                text.push_str(&format!(" cwd {cwd:?}"));
            }
            text
        }
        Transport::Http { url, headers, bearer_token_env, .. } => {
            let mut text = format!("url {url:?}");
            if !headers.is_empty() {
                text.push_str(&format!(" headers {:?}", headers.keys().collect::<Vec<_>>()));
            }
            if let Some(var) = bearer_token_env {
                text.push_str(&format!(" sending ${var} as a bearer token"));
            }
            text
        }
    };
    format!("{transport}{sandboxed}")
}

/// Every server's state as the session describes itself.
pub(crate) fn server_infos(mcp: &axon_mcp::McpManager) -> Vec<McpServerInfo> {
    mcp.statuses()
        .iter()
        .map(|status| {
            let (state, message) = describe_state(status);
            McpServerInfo { name: status.name.clone(), state, message }
        })
        .collect()
}

/// A server's state as events carry it, and the error's reason.
pub fn describe_state(status: &ServerStatus) -> (McpState, Option<String>) {
    match &status.state {
        ServerState::Connecting => (McpState::Connecting, None),
        // How long it took is what tells a slow server from a stuck one.
        ServerState::Ready => {
            let tools = match status.tools {
                1 => "1 tool".to_string(),
                n => format!("{n} tools"),
            };
            let message = match status.startup {
                Some(took) => format!("{:.1} s, {tools}", took.as_secs_f64()),
                None => tools,
            };
            (McpState::Ready, Some(message))
        }
        ServerState::Error(message) => (McpState::Error, Some(message.clone())),
        ServerState::Closed => (McpState::Closed, None),
        ServerState::NeedsLogin(message) => (McpState::NeedsLogin, Some(message.clone())),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn server(script: &str) -> ServerConfig {
        axon_mcp::config::TomlServer {
            command: Some("node".into()),
            args: vec![script.into()],
            ..Default::default()
        }
        .into_config("tools", ".mcp.json")
        .unwrap()
    }

    /// Starts the workspace's server once, answering yes; the count of
    /// questions asked so far.
    fn start(store: TrustStore<'_>, asked: &Arc<AtomicUsize>, config: ServerConfig) -> usize {
        let counter = Arc::clone(asked);
        let consent = ServerConsent::Ask(Arc::new(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            true
        }));
        let (events, _seen) = crate::events::channel();
        let started =
            servers_to_start(ApprovalPolicy::Ask, &consent, vec![], vec![config], &events, store);
        assert_eq!(started.len(), 1);
        asked.load(Ordering::SeqCst)
    }

    #[test]
    fn consent_is_remembered_until_the_server_or_its_script_changes() {
        let data = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(workspace.path()).unwrap();
        std::fs::write(root.join("mcp.js"), "serve()").unwrap();
        let store = TrustStore { data: data.path(), workspace: &root };
        let asked = Arc::new(AtomicUsize::new(0));
        assert_eq!(start(store, &asked, server("mcp.js")), 1, "asked the first time");
        assert_eq!(start(store, &asked, server("mcp.js")), 1, "remembered");
        // A command inside the sandbox may rewrite the script: asked again.
        std::fs::write(root.join("mcp.js"), "steal()").unwrap();
        assert_eq!(start(store, &asked, server("mcp.js")), 2, "its code changed");
        assert_eq!(start(store, &asked, server("mcp.js")), 2, "remembered again");
        // Another command line: asked again.
        assert_eq!(start(store, &asked, server("other.js")), 3);
        // Nothing about it was written into the workspace.
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
    }
}
