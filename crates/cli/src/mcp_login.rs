//! `axon mcp login NAME` and `axon mcp logout NAME`: signing in to an HTTP
//! MCP server with OAuth, and forgetting its tokens. The flow itself is
//! `axon_mcp::auth` (through `axon_runtime::mcp`); this file only finds
//! the server (through the workspace's `Project`), sends the user to the
//! URL (always printed; a browser opened when one can be) and reports.
//! Tokens are never printed.
//!
//! Guarantees: signing in to a workspace's server (its `.mcp.json` or
//! `.axon/config.toml`) needs the consent starting it needs: the user
//! trusted it (`axon mcp trust NAME`) for exactly what it is now. A
//! repository cannot make a login send anything of the user's: a workspace
//! file may not name a secret variable (`config::restrict_to_workspace`).

use axon_runtime::{Project, ServerConfig, Transport};

use crate::{exit, say};

/// The configured HTTP server `name`, with its token folder set.
fn server(project: &Project, name: &str) -> Result<ServerConfig, u8> {
    let Some(server) = project.server(name) else {
        eprintln!("axon: no MCP server named '{name}' is configured");
        return Err(exit::USAGE);
    };
    if let Transport::Http { bearer_token_env: Some(var), .. } = &server.transport {
        eprintln!(
            "axon: MCP server {name} takes its token from ${var} (bearer_token_env); remove that setting to sign in with OAuth instead"
        );
        return Err(exit::USAGE);
    }
    Ok(server)
}

/// Whether the user consented to the workspace server `name` (the user's
/// own servers need none); else says how to, and the exit code.
fn consented(project: &Project, name: &str) -> Result<(), u8> {
    let config = &project.config;
    if config.user_servers.iter().any(|s| s.name == name) {
        return Ok(());
    }
    let Some(server) = config.workspace_servers.iter().find(|s| s.name == name) else {
        return Ok(());
    };
    let store = project.trust_store();
    if store.trusts(server) {
        return Ok(());
    }
    eprintln!(
        "axon: MCP server {name} comes from {} and you have not allowed it ({}); signing in \
         would send it a login like starting it would. Look at it, then run `axon mcp trust \
         {name}` and `axon mcp login {name}` again",
        server.source,
        axon_runtime::servers::describe(server)
    );
    Err(exit::USAGE)
}

pub async fn login(project: &Project, name: &str, no_browser: bool) -> u8 {
    let server = match consented(project, name).and_then(|()| server(project, name)) {
        Ok(server) => server,
        Err(code) => return code,
    };
    let send_user = async |url: String| {
        eprintln!(
            "axon: to sign in to MCP server {name}, open this URL in your browser:\n\n  {url}\n"
        );
        if !no_browser {
            open_browser(&url);
        }
        eprintln!(
            "axon: waiting for the browser to come back (at most {}s; Ctrl-C to stop)…",
            axon_runtime::mcp::LOGIN_WAIT.as_secs()
        );
    };
    let signed_in = tokio::select! {
        done = axon_runtime::mcp::login(&server, axon_runtime::mcp::LOGIN_WAIT, send_user) => done,
        _ = tokio::signal::ctrl_c() => Err("cancelled".to_string()),
    };
    match signed_in {
        Ok(done) => {
            let scopes = if done.scopes.is_empty() {
                String::new()
            } else {
                format!(" (scopes: {})", done.scopes.join(" "))
            };
            say(&format!(
                "Signed in to {name}{scopes}; the tokens are kept in {}",
                done.token_file.display()
            ));
            exit::OK
        }
        Err(message) => {
            eprintln!("axon: {message}");
            exit::FAILED
        }
    }
}

pub fn logout(project: &Project, name: &str) -> u8 {
    let server = match server(project, name) {
        Ok(server) => server,
        Err(code) => return code,
    };
    match axon_runtime::mcp::logout(&server) {
        Ok(true) => {
            say(&format!("Signed out of {name}: its tokens are deleted."));
            exit::OK
        }
        Ok(false) => {
            say(&format!("No tokens were kept for {name}; nothing to do."));
            exit::OK
        }
        Err(message) => {
            eprintln!("axon: {message}");
            exit::FAILED
        }
    }
}

/// Opens `url` in the desktop's browser when there is a desktop; silently
/// does nothing otherwise (the URL is printed either way).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
