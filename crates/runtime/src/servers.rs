//! Which MCP servers a session starts, and how their states are reported.
//!
//! The user's own servers always start. A workspace's (its
//! `.axon/config.toml` and `.mcp.json`) are commands a repository asks to
//! run: they start only with the user's consent, and never in a read-only
//! session.

use std::sync::Arc;

use axon_core::ApprovalPolicy;
use axon_mcp::ServerState;
use axon_mcp::config::{ServerConfig, Transport};
use axon_protocol::{AgentEvent, McpState};

use crate::events::Emitter;

/// Asks the user whether a workspace server may start; gets the server and
/// a description of everything it would run or send.
pub type AskConsent = Arc<dyn Fn(&ServerConfig, &str) -> bool + Send + Sync>;

/// Whether the workspace's own MCP servers start.
#[derive(Clone)]
pub enum ServerConsent {
    /// All of them (the user said so up front, e.g. `--yes`).
    Allow,
    /// None; each one skipped is reported with how to allow it.
    Refuse,
    /// Ask about each.
    Ask(AskConsent),
}

/// The servers to start: the user's, and the workspace's the user allowed.
pub fn servers_to_start(
    approval: ApprovalPolicy,
    consent: &ServerConsent,
    user: Vec<ServerConfig>,
    workspace: Vec<ServerConfig>,
    events: &Emitter,
) -> Vec<ServerConfig> {
    let mut servers = user;
    for server in workspace {
        let allowed = match consent {
            ServerConsent::Allow => true,
            ServerConsent::Ask(ask) if approval != ApprovalPolicy::ReadOnly => {
                ask(&server, &describe(&server))
            }
            ServerConsent::Ask(_) | ServerConsent::Refuse => {
                events.emit(AgentEvent::Warning {
                    message: format!(
                        "MCP server {} from {} was not started: workspace servers run commands; pass --yes to allow them",
                        server.name, server.source
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
    match &server.transport {
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
        Transport::Http { url, headers, bearer_token_env } => {
            let mut text = format!("url {url:?}");
            if !headers.is_empty() {
                text.push_str(&format!(" headers {:?}", headers.keys().collect::<Vec<_>>()));
            }
            if let Some(var) = bearer_token_env {
                text.push_str(&format!(" sending ${var} as a bearer token"));
            }
            text
        }
    }
}

/// A server's state as events carry it, and the error's reason.
pub fn describe_state(state: &ServerState) -> (McpState, Option<String>) {
    match state {
        ServerState::Connecting => (McpState::Connecting, None),
        ServerState::Ready => (McpState::Ready, None),
        ServerState::Error(message) => (McpState::Error, Some(message.clone())),
        ServerState::Closed => (McpState::Closed, None),
    }
}
