//! MCP servers as users configure them.
//!
//! Two sources, one shape ([`ServerConfig`]): the workspace's `.mcp.json`
//! (`{"mcpServers": {NAME: {command, args, env, cwd} | {type: "http", url,
//! headers}}}`, the file other MCP hosts write) and `[mcp_servers.NAME]`
//! tables in axon's TOML config, which add axon's own settings (timeouts,
//! tool filters, a bearer token from the environment). An HTTP server may
//! carry OAuth settings ([`OAuthSettings`]): `"oauth": {"clientId",
//! "callbackPort", "scopes"}` in `.mcp.json` (the keys Claude Code writes),
//! `oauth = {client_id, client_secret_env, scopes, callback_port,
//! client_metadata_url}` in TOML.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// How long a server may take to start and answer `initialize`, per
/// attempt. `npx` servers often take 10 to 20 s on a cold cache; servers
/// start in the background, so a long limit holds up nothing.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub startup_timeout: Duration,
    /// Longest one tool call may take; the agent's own limit otherwise.
    pub tool_timeout: Option<Duration>,
    /// When set, only these tools are offered to the model.
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub disabled_tools: Vec<String>,
    /// Where it was configured, for messages.
    pub source: String,
    /// Whether a stdio server runs in the OS sandbox (`sandbox = true`),
    /// resolved by the session to the sandbox its commands run in.
    pub sandbox: ServerSandbox,
}

/// The OS sandbox a stdio server runs in.
#[derive(Clone, Default)]
pub enum ServerSandbox {
    /// None: it runs with the user's rights (the default).
    #[default]
    Off,
    /// The config asks for it (`sandbox = true`); the session has not
    /// resolved it yet. A server still in this state does not start.
    Wanted,
    /// In this sandbox (the session's, shared with its commands).
    In(std::sync::Arc<axon_tools::CommandSandbox>),
    /// Asked for, but the session cannot give it (the reason); the server
    /// does not start rather than run unconfined.
    Unavailable(String),
}

impl std::fmt::Debug for ServerSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerSandbox::Off => f.write_str("Off"),
            ServerSandbox::Wanted => f.write_str("Wanted"),
            ServerSandbox::In(sandbox) => write!(f, "In({})", sandbox.describe()),
            ServerSandbox::Unavailable(why) => write!(f, "Unavailable({why:?})"),
        }
    }
}

impl PartialEq for ServerSandbox {
    fn eq(&self, other: &ServerSandbox) -> bool {
        match (self, other) {
            (ServerSandbox::In(a), ServerSandbox::In(b)) => std::sync::Arc::ptr_eq(a, b),
            (ServerSandbox::Unavailable(a), ServerSandbox::Unavailable(b)) => a == b,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl ServerConfig {
    /// Whether the tool `name` may be offered to the model.
    pub fn offers(&self, name: &str) -> bool {
        let enabled = self.enabled_tools.as_ref().is_none_or(|list| list.iter().any(|t| t == name));
        enabled && !self.disabled_tools.iter().any(|t| t == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        bearer_token_env: Option<String>,
        /// How axon signs in to it with OAuth (used unless a
        /// `bearer_token_env` gives the token).
        oauth: OAuthSettings,
    },
}

/// OAuth settings of one HTTP server. All optional: without a client id,
/// axon registers itself with the authorization server (dynamic client
/// registration, or a client ID metadata document when one is configured and
/// the server accepts those).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client id registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret, if it has one.
    pub client_secret_env: Option<String>,
    /// The secret itself, from a program that holds it (never read from a
    /// config file); it wins over `client_secret_env`.
    pub client_secret: Option<String>,
    /// Scopes to ask for; otherwise those the server advertises.
    pub scopes: Vec<String>,
    /// The loopback port the browser is sent back to (what a pre-registered
    /// client's redirect URI names); otherwise a free one.
    pub callback_port: Option<u16>,
    /// An HTTPS URL of this client's metadata document, used as its client
    /// id where the authorization server supports that.
    pub client_metadata_url: Option<String>,
    /// Where signed-in servers' tokens are kept (the user's data folder,
    /// set by the session with [`crate::auth::locate_tokens`]); without it
    /// no token is read or kept.
    pub token_dir: Option<PathBuf>,
}

/// `oauth` in a `.mcp.json` entry, as Claude Code writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonOAuth {
    client_id: Option<String>,
    callback_port: Option<u16>,
    /// One space-separated string.
    scopes: Option<String>,
}

/// `oauth` in a `[mcp_servers.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TomlOAuth {
    pub client_id: Option<String>,
    pub client_secret_env: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    pub callback_port: Option<u16>,
    pub client_metadata_url: Option<String>,
}

impl From<TomlOAuth> for OAuthSettings {
    fn from(o: TomlOAuth) -> Self {
        OAuthSettings {
            client_id: o.client_id,
            client_secret_env: o.client_secret_env,
            client_secret: None,
            scopes: o.scopes,
            callback_port: o.callback_port,
            client_metadata_url: o.client_metadata_url,
            token_dir: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: not valid JSON ({message})")]
    Parse { file: String, message: String },
    #[error("{file}: MCP server '{name}': {message}")]
    Invalid { file: String, name: String, message: String },
}

#[derive(Debug, Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, JsonServer>,
}

/// One entry of `.mcp.json`. Unknown keys are tolerated: other hosts add
/// their own.
#[derive(Debug, Deserialize)]
struct JsonServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    disabled: bool,
    /// axon's own key (other hosts ignore it): how long the server may
    /// take to start, as `startup_timeout_ms` in the TOML config.
    startup_timeout_ms: Option<u64>,
    oauth: Option<JsonOAuth>,
}

/// Reads a `.mcp.json` document; `source` names it in errors.
pub fn parse_mcp_json(text: &str, source: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let parsed: McpJson = serde_json::from_str(text)
        .map_err(|e| ConfigError::Parse { file: source.to_string(), message: e.to_string() })?;
    parsed
        .mcp_servers
        .into_iter()
        .map(|(name, server)| {
            let transport = transport(
                source,
                &name,
                server.kind.as_deref(),
                Endpoint {
                    command: server.command,
                    args: server.args,
                    env: server.env,
                    cwd: server.cwd,
                    url: server.url,
                    headers: server.headers,
                    bearer_token_env: None,
                    oauth: server.oauth.map(|o| OAuthSettings {
                        client_id: o.client_id,
                        scopes: o
                            .scopes
                            .unwrap_or_default()
                            .split_whitespace()
                            .map(String::from)
                            .collect(),
                        callback_port: o.callback_port,
                        ..OAuthSettings::default()
                    }),
                },
            )?;
            Ok(ServerConfig {
                name,
                transport,
                enabled: !server.disabled,
                startup_timeout: server
                    .startup_timeout_ms
                    .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
                tool_timeout: None,
                enabled_tools: None,
                disabled_tools: Vec::new(),
                source: source.to_string(),
                sandbox: ServerSandbox::Off,
            })
        })
        .collect()
}

/// `[mcp_servers.NAME]` in axon's TOML config.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TomlServer {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// An environment variable holding a token sent as `Authorization: Bearer`.
    pub bearer_token_env: Option<String>,
    pub enabled: Option<bool>,
    pub startup_timeout_ms: Option<u64>,
    pub tool_timeout_ms: Option<u64>,
    pub enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Run this stdio server in the session's OS sandbox.
    pub sandbox: Option<bool>,
    /// How axon signs in to this HTTP server with OAuth.
    pub oauth: Option<TomlOAuth>,
}

impl TomlServer {
    pub fn into_config(self, name: &str, source: &str) -> Result<ServerConfig, ConfigError> {
        let transport = transport(
            source,
            name,
            None,
            Endpoint {
                command: self.command,
                args: self.args,
                env: self.env,
                cwd: self.cwd,
                url: self.url,
                headers: self.headers,
                bearer_token_env: self.bearer_token_env,
                oauth: self.oauth.map(OAuthSettings::from),
            },
        )?;
        let sandbox = match (self.sandbox, &transport) {
            (Some(true), Transport::Stdio { .. }) => ServerSandbox::Wanted,
            (Some(true), Transport::Http { .. }) => {
                return Err(ConfigError::Invalid {
                    file: source.to_string(),
                    name: name.to_string(),
                    message: "`sandbox = true` confines a command axon starts; this server \
                              is reached over HTTP (url), so remove `sandbox`"
                        .to_string(),
                });
            }
            _ => ServerSandbox::Off,
        };
        Ok(ServerConfig {
            name: name.to_string(),
            transport,
            enabled: self.enabled.unwrap_or(true),
            startup_timeout: self
                .startup_timeout_ms
                .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
            tool_timeout: self.tool_timeout_ms.map(Duration::from_millis),
            enabled_tools: self.enabled_tools,
            disabled_tools: self.disabled_tools,
            source: source.to_string(),
            sandbox,
        })
    }
}

struct Endpoint {
    command: Option<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    headers: BTreeMap<String, String>,
    bearer_token_env: Option<String>,
    oauth: Option<OAuthSettings>,
}

fn transport(
    source: &str,
    name: &str,
    kind: Option<&str>,
    e: Endpoint,
) -> Result<Transport, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        file: source.to_string(),
        name: name.to_string(),
        message,
    };
    let kind = match (kind, &e.command, &e.url) {
        (Some(kind), _, _) => kind,
        (None, Some(_), None) => "stdio",
        (None, None, Some(_)) => "http",
        (None, Some(_), Some(_)) => {
            return Err(invalid("give either `command` or `url`, not both".into()));
        }
        (None, None, None) => {
            return Err(invalid(
                "give a `command` to start, or the `url` of a running server".into(),
            ));
        }
    };
    match kind {
        "stdio" if e.oauth.is_some() => {
            Err(invalid("`oauth` is for servers reached over HTTP (url)".into()))
        }
        "stdio" => match e.command {
            Some(command) if !command.trim().is_empty() => {
                Ok(Transport::Stdio { command, args: e.args, env: e.env, cwd: e.cwd })
            }
            _ => Err(invalid("a stdio server needs a `command`".into())),
        },
        "http" | "streamable-http" | "streamableHttp" => match e.url {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(Transport::Http {
                    url,
                    headers: e.headers,
                    bearer_token_env: e.bearer_token_env,
                    oauth: e.oauth.unwrap_or_default(),
                })
            }
            Some(url) => Err(invalid(format!("`url` must start with http:// or https://, not '{url}'"))),
            None => Err(invalid("an HTTP server needs a `url`".into())),
        },
        "sse" => Err(invalid(
            "the old HTTP+SSE transport is not supported; use the server's streamable HTTP endpoint (type \"http\")".into(),
        )),
        other => Err(invalid(format!("unknown type '{other}'; use \"stdio\" or \"http\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_json_other_hosts_write_is_understood() {
        let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"A": "1"}},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "t"}},
            "off": {"command": "x", "disabled": true, "alwaysAllow": []},
            "slow": {"command": "y", "startup_timeout_ms": 45000}
        }}"#;
        let servers = parse_mcp_json(text, ".mcp.json").unwrap();
        assert_eq!(servers.len(), 4);
        assert_eq!(servers[0].startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert_eq!(servers[3].startup_timeout, Duration::from_secs(45));
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { command, args, .. } if command == "npx" && args.len() == 3)
        );
        assert!(!servers[1].enabled);
        assert!(
            matches!(&servers[2].transport, Transport::Http { url, .. } if url == "https://example.com/mcp")
        );
    }

    #[test]
    fn mistakes_name_the_file_and_server() {
        let err = parse_mcp_json(r#"{"mcpServers": {"x": {}}}"#, "ws/.mcp.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ws/.mcp.json: MCP server 'x': give a `command` to start, or the `url` of a running server"
        );
        let err =
            parse_mcp_json(r#"{"mcpServers": {"y": {"type": "sse", "url": "http://h"}}}"#, "f")
                .unwrap_err();
        assert!(err.to_string().contains("not supported"));
        assert!(matches!(parse_mcp_json("{", "f"), Err(ConfigError::Parse { .. })));
    }

    #[test]
    fn toml_servers_carry_axon_settings() {
        let server = TomlServer {
            url: Some("http://127.0.0.1:9/mcp".into()),
            bearer_token_env: Some("TOKEN".into()),
            startup_timeout_ms: Some(500),
            enabled_tools: Some(vec!["a".into(), "b".into()]),
            disabled_tools: vec!["b".into()],
            ..TomlServer::default()
        }
        .into_config("remote", "config.toml")
        .unwrap();
        assert_eq!(server.startup_timeout, Duration::from_millis(500));
        assert!(server.offers("a") && !server.offers("b") && !server.offers("c"));
    }

    #[test]
    fn oauth_settings_come_from_both_files_and_only_for_http() {
        let text = r#"{"mcpServers": {"r": {"type": "http", "url": "https://h/mcp",
            "oauth": {"clientId": "abc", "callbackPort": 8080, "scopes": "read write",
                      "authServerMetadataUrl": "https://as/.well-known/x"}}}}"#;
        let servers = parse_mcp_json(text, "f").unwrap();
        let Transport::Http { oauth, .. } = &servers[0].transport else { panic!() };
        assert_eq!(oauth.client_id.as_deref(), Some("abc"));
        assert_eq!(oauth.callback_port, Some(8080));
        assert_eq!(oauth.scopes, ["read", "write"]);

        let table: TomlServer = toml::from_str(
            "url = \"https://h/mcp\"\noauth = { client_id = \"id\", client_secret_env = \"S\", scopes = [\"a\"], callback_port = 9 }",
        )
        .unwrap();
        let server = table.into_config("t", "c").unwrap();
        let Transport::Http { oauth, .. } = &server.transport else { panic!() };
        assert_eq!(oauth.client_secret_env.as_deref(), Some("S"));
        assert_eq!(oauth.callback_port, Some(9));
        assert!(oauth.token_dir.is_none() && oauth.client_secret.is_none());

        let unknown =
            toml::from_str::<TomlServer>("url = \"https://h\"\noauth = { client = \"x\" }");
        assert!(unknown.is_err());
        let stdio = TomlServer {
            command: Some("srv".into()),
            oauth: Some(TomlOAuth::default()),
            ..TomlServer::default()
        };
        assert!(stdio.into_config("s", "c").unwrap_err().to_string().contains("over HTTP"));
    }

    #[test]
    fn a_toml_server_can_ask_for_the_sandbox_and_mcp_json_ones_cannot() {
        let asks = TomlServer {
            command: Some("srv".into()),
            sandbox: Some(true),
            ..TomlServer::default()
        };
        assert_eq!(asks.into_config("s", "c").unwrap().sandbox, ServerSandbox::Wanted);
        let plain = TomlServer { command: Some("srv".into()), ..TomlServer::default() };
        assert_eq!(plain.into_config("s", "c").unwrap().sandbox, ServerSandbox::Off);
        let remote = TomlServer {
            url: Some("http://127.0.0.1:9/mcp".into()),
            sandbox: Some(true),
            ..TomlServer::default()
        };
        let refused = remote.into_config("r", "c").unwrap_err().to_string();
        assert!(refused.contains("reached over HTTP"), "{refused}");
        let json = parse_mcp_json(r#"{"mcpServers": {"s": {"command": "srv"}}}"#, "f").unwrap();
        assert_eq!(json[0].sandbox, ServerSandbox::Off);
    }
}
