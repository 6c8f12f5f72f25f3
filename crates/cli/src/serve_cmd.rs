//! `axon mcp serve`: the workspace's built-in tools, and the agent itself as
//! `axon_run` when a provider is configured, served to any MCP host over
//! stdio (the default) or streamable HTTP.
//!
//! Stdout belongs to the protocol on stdio: everything this command says
//! goes to stderr.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use axon_runtime::Project;
use axon_runtime::mcp::{
    DEFAULT_MAX_SESSIONS, HttpOptions, HttpServer, SessionLimits, ToolServer, serve_stdio,
};
use axon_runtime::serve::{self, ServeOptions};
use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::tool_cmd::ProfileArg;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The workspace folder the tools are confined to.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Which tool set: a code workspace (default) or a notes vault.
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
    /// Serve only the tools that change nothing (no writes, no shell).
    #[arg(long)]
    read_only: bool,
    /// Serve streamable HTTP on ADDR (`127.0.0.1:8765`, or just a port)
    /// instead of stdio. The endpoint is /mcp.
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    http: Option<SocketAddr>,
    /// Require `Authorization: Bearer $VAR` on every HTTP request. Needed to
    /// bind anything but loopback.
    #[arg(long, value_name = "VAR", requires = "http")]
    token_env: Option<String>,
    /// Also accept this Host header (NAME or NAME:PORT), e.g. behind a proxy.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_hosts: Vec<String>,
    /// Also accept requests from pages of this origin (scheme://host:port).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origins: Vec<String>,
    /// Close an HTTP session unused this long (`90s`, `30m`, `2h`; a bare
    /// number is seconds). Its host gets 404 and initializes again.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration, requires = "http")]
    session_idle: Duration,
    /// Keep at most this many HTTP sessions; a new one evicts the session
    /// idle the longest.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS, value_parser = parse_count, requires = "http")]
    max_sessions: usize,
    /// The sandbox of `shell` commands and of `axon_run`'s (default: the
    /// config's, else workspace-write); `off` runs them unconfined.
    #[arg(long, value_parser = axon_runtime::safety_config::parse_mode)]
    sandbox: Option<axon_protocol::SandboxMode>,
    /// Do not offer `axon_run`, even with a provider configured.
    #[arg(long)]
    no_agent: bool,
    /// Provider for `axon_run` (default: the configured one).
    #[arg(long, conflicts_with = "no_agent")]
    provider: Option<String>,
    /// Model for `axon_run`.
    #[arg(long, conflicts_with = "no_agent")]
    model: Option<String>,
}

impl ServeArgs {
    pub fn over_stdio(&self) -> bool {
        self.http.is_none()
    }
}

/// `90s`, `30m`, `2h`, or a number of seconds; at least a second.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds_per: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("'{text}' is not a duration like 90s, 30m or 2h")),
    };
    let count: u64 =
        number.parse().map_err(|_| format!("'{text}' is not a duration like 90s, 30m or 2h"))?;
    match count.checked_mul(seconds_per) {
        Some(0) => Err("the duration must be at least 1s".to_string()),
        Some(seconds) => Ok(Duration::from_secs(seconds)),
        None => Err(format!("'{text}' is too long")),
    }
}

/// A whole number of at least 1.
fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{text}' is not a whole number")),
    }
}

/// `8765`, `localhost:8765` or any socket address.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|e| format!("bad port '{port}': {e}"))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| format!("'{text}' is not an address like 127.0.0.1:8765 or a port"))
}

pub async fn run(args: ServeArgs) -> u8 {
    let (server, summary) = match prepare(&args).await {
        Ok(prepared) => prepared,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let shutdown = CancellationToken::new();
    tokio::spawn(stop_on_signal(shutdown.clone()));
    let result = match args.http {
        None => {
            eprintln!("axon: serving {summary} over MCP on stdio");
            tokio::select! {
                result = serve_stdio(server) => result,
                () = shutdown.cancelled() => Ok(()),
            }
        }
        Some(addr) => {
            let options = match http_options(&args) {
                Ok(options) => options,
                Err(e) => {
                    eprintln!("axon: {e:#}");
                    return exit::USAGE;
                }
            };
            let http = match HttpServer::bind(addr, options).await {
                Ok(http) => http,
                Err(e) => {
                    eprintln!("axon: {e}");
                    return exit::USAGE;
                }
            };
            eprintln!("axon: serving {summary} over MCP at {}", http.url());
            http.serve(move || server.session(), shutdown).await
        }
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: {e}");
            exit::FAILED
        }
    }
}

/// The server, and a line saying what it serves.
async fn prepare(args: &ServeArgs) -> Result<(ToolServer, String)> {
    let project = Project::load(&args.dir)?;
    for warning in &project.config.refused {
        eprintln!("axon: warning: {warning}");
    }
    let options = ServeOptions {
        profile: args.profile.map(Into::into),
        read_only: args.read_only,
        sandbox: args.sandbox,
        agent: !args.no_agent,
        provider: args.provider.clone(),
        model: args.model.clone(),
        secret_vars: args.token_env.iter().cloned().collect(),
    };
    let served = serve::serve(project, &options).await?;
    for warning in served.warnings {
        eprintln!("axon: {warning}");
    }
    Ok((served.server, served.summary))
}

fn http_options(args: &ServeArgs) -> Result<HttpOptions> {
    let token = match &args.token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => Some(token.trim().to_string()),
            Ok(_) => bail!("the environment variable {var} named by --token-env is empty"),
            Err(_) => bail!("the environment variable {var} named by --token-env is not set"),
        },
    };
    Ok(HttpOptions {
        token,
        allowed_hosts: args.allow_hosts.clone(),
        allowed_origins: args.allow_origins.clone(),
        sessions: SessionLimits { idle: args.session_idle, max_sessions: args.max_sessions },
    })
}

/// Ctrl-C, SIGTERM, SIGHUP or SIGQUIT stops serving; in-flight calls are
/// dropped with the runtime, which kills any shell they started, and main
/// kills what they detached. The signals are caught from this call on, not
/// from when the returned task first runs.
pub(crate) fn stop_on_signal(shutdown: CancellationToken) -> impl Future<Output = ()> + Send {
    let endings = crate::signals::Endings::listen(true);
    async move {
        match endings {
            Some(mut endings) => {
                endings.next().await;
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        shutdown.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_accept_a_bare_port_and_localhost() {
        assert_eq!(parse_addr("8765").unwrap(), "127.0.0.1:8765".parse().unwrap());
        assert_eq!(parse_addr("localhost:0").unwrap(), "127.0.0.1:0".parse().unwrap());
        assert_eq!(parse_addr("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("localhost:x").is_err());
    }

    #[test]
    fn durations_take_seconds_minutes_and_hours() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        for bad in ["", "0", "0m", "5d", "m", "1.5h", "-3s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn session_limits_default_to_30_minutes_and_256_sessions() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let cli = Cli::try_parse_from(["axon", "--http", "0"]).unwrap();
        assert_eq!(cli.serve.session_idle, Duration::from_secs(30 * 60));
        assert_eq!(cli.serve.max_sessions, 256);
        let options = http_options(&cli.serve).unwrap();
        assert_eq!(options.sessions, SessionLimits::default());
        let cli = Cli::try_parse_from([
            "axon",
            "--http",
            "0",
            "--session-idle",
            "5m",
            "--max-sessions",
            "8",
        ])
        .unwrap();
        assert_eq!(
            http_options(&cli.serve).unwrap().sessions,
            SessionLimits { idle: Duration::from_secs(300), max_sessions: 8 }
        );
        assert!(Cli::try_parse_from(["axon", "--http", "0", "--max-sessions", "0"]).is_err());
        assert!(Cli::try_parse_from(["axon", "--max-sessions", "8"]).is_err(), "needs --http");
    }
}
