//! Signing in to MCP servers with OAuth 2.1 and PKCE, on rmcp's `auth`
//! support (discovery from the server's `WWW-Authenticate` challenge and
//! `/.well-known/oauth-protected-resource`, authorization server metadata,
//! dynamic client registration or a pre-registered client id, token refresh).
//!
//! - [`login`] runs the browser flow once (`axon mcp login NAME`) and keeps
//!   the tokens in the user's data folder ([`store`]), 0600.
//! - A session's HTTP connection ([`connection`]) sends the stored token on
//!   every request, refreshed before it expires and once more when the
//!   server refuses it; a server that still refuses is marked "needs login"
//!   with the command to run ([`needs_login_message`]).
//! - [`logout`] forgets a server's tokens.

mod connection;
mod login;
mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) use connection::authorized_client;
pub use login::{LOGIN_WAIT, LoginDone, login};
pub use store::token_path;

use crate::config::{ServerConfig, Transport};

/// The command that signs in to `server`.
pub fn login_command(server: &str) -> String {
    format!("axon mcp login {server}")
}

/// What a server that refuses axon's token (or has none) is told to need.
pub fn needs_login_message(server: &str) -> String {
    format!(
        "MCP server {server} needs login (it refused the request without a valid token): run `{}`",
        login_command(server)
    )
}

/// Tells every HTTP server where signed-in servers' tokens live: the
/// `mcp-tokens` folder of the user's data folder `data`.
pub fn locate_tokens(servers: &mut [ServerConfig], data: &Path) {
    for server in servers {
        if let Transport::Http { oauth, .. } = &mut server.transport {
            oauth.token_dir = Some(data.join(store::TOKEN_FOLDER));
        }
    }
}

/// Forgets the tokens of `server`: whether there were any.
pub fn logout(server: &ServerConfig) -> Result<bool, String> {
    let (url, dir) = http_and_tokens(server)?;
    let _ = std::fs::remove_file(challenge_path(dir, &server.name, url));
    store::FileStore { path: token_path(dir, &server.name, url) }.remove()
}

/// Whether tokens of `server` are stored.
pub fn has_tokens(server: &ServerConfig) -> bool {
    http_and_tokens(server).is_ok_and(|(url, dir)| token_path(dir, &server.name, url).is_file())
}

/// The secrets of `server` a session's records must never show: its stored
/// access and refresh tokens and its client secret. Tokens refreshed later
/// in the session are new values this cannot know.
pub fn stored_secrets(server: &ServerConfig) -> Vec<String> {
    let mut secrets = Vec::new();
    if let Transport::Http { oauth, .. } = &server.transport
        && let Ok(Some(value)) = client_secret(oauth)
    {
        secrets.push(value);
    }
    let Ok((url, dir)) = http_and_tokens(server) else { return secrets };
    let store = store::FileStore { path: token_path(dir, &server.name, url) };
    if let Ok(Some(stored)) = store.read()
        && let Ok(value) = serde_json::to_value(&stored)
    {
        for key in ["access_token", "refresh_token"] {
            if let Some(token) = value["token_response"][key].as_str() {
                secrets.push(token.to_string());
            }
        }
    }
    secrets
}

/// The client secret of a pre-registered client: given directly, or read
/// from its variable.
pub(crate) fn client_secret(
    oauth: &crate::config::OAuthSettings,
) -> Result<Option<String>, String> {
    if let Some(secret) = &oauth.client_secret {
        return Ok(Some(secret.clone()));
    }
    match &oauth.client_secret_env {
        Some(var) => std::env::var(var)
            .map(Some)
            .map_err(|_| format!("the client secret variable {var} is not set")),
        None => Ok(None),
    }
}

/// The URL and token folder of an HTTP server.
fn http_and_tokens(server: &ServerConfig) -> Result<(&str, &Path), String> {
    match &server.transport {
        Transport::Http { url, oauth, .. } => match &oauth.token_dir {
            Some(dir) => Ok((url, dir)),
            None => Err("no data folder is known to keep tokens in".to_string()),
        },
        Transport::Stdio { .. } => Err(format!(
            "MCP server {} is a local command; signing in is for servers reached over HTTP (url)",
            server.name
        )),
    }
}

/// Whether the server's last answer about authorization was a refusal
/// (HTTP 401, or 403 for want of scope): set by the HTTP client, cleared by
/// any accepted request. A 403's challenge (the scope it asks for) is kept
/// next to the server's tokens, so the next `axon mcp login` asks for it.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoginWatch(Arc<Watched>);

#[derive(Debug, Default)]
struct Watched {
    refused: AtomicBool,
    challenge_file: Mutex<Option<PathBuf>>,
}

impl LoginWatch {
    pub(crate) fn set(&self, refused: bool) {
        self.0.refused.store(refused, Ordering::Relaxed);
    }

    pub(crate) fn refused(&self) -> bool {
        self.0.refused.load(Ordering::Relaxed)
    }

    /// Where a 403's challenge is kept (the server's token file, `.challenge`).
    pub(crate) fn keep_challenges_at(&self, file: PathBuf) {
        *self.0.challenge_file.lock().unwrap_or_else(PoisonError::into_inner) = Some(file);
    }

    /// The server wants more scope than the token has: only a new sign-in,
    /// asking for it, helps.
    pub(crate) fn wants_scope(&self, challenge: &str) {
        self.set(true);
        let file = self.0.challenge_file.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(file) = file {
            // Best effort: without it the next sign-in asks for the usual scopes.
            let _ = store::write_private(&file, challenge.as_bytes());
        }
    }
}

/// The file a 403's challenge for `server` at `url` is kept in.
pub(crate) fn challenge_path(token_dir: &Path, server: &str, url: &str) -> PathBuf {
    token_path(token_dir, server, url).with_extension("challenge")
}
