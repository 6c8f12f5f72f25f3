//! `axon web`: the chat panel in a browser, served on this machine.
//!
//! Prints the address to open (with its token, like Jupyter) on stdout and
//! serves until Ctrl-C or SIGTERM; the session then shuts down (MCP servers
//! and commands stopped, its file synced).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::options::AgentOptions;

#[derive(Debug, Args)]
pub struct WebArgs {
    /// The workspace folder.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The address to listen on (port 0: a free port). Beyond loopback it
    /// needs --token-env.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Take the token from this environment variable instead of making a
    /// random one (required beyond loopback; at least 32 characters).
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
    /// Also answer to this Host name (a tunnel's or the machine's LAN
    /// name); repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_host: Vec<String>,
    #[command(flatten)]
    agent: AgentOptions,
}

pub async fn run(args: WebArgs) -> u8 {
    let token = match &args.token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => Some(token.trim().to_string()),
            Ok(_) => return usage(&format!("the environment variable {var} is empty")),
            Err(_) => return usage(&format!("the environment variable {var} is not set")),
        },
    };
    let mut config = match args.agent.session_config(&args.dir) {
        Ok(config) => config,
        Err(e) => return usage(&format!("{e:#}")),
    };
    config.interactive = true;
    // Every edit's diff shows on its card, asked about or not.
    config.preview_actions = true;
    config.replay_history = true;
    config.secret_vars.extend(args.token_env.iter().cloned());
    let options = axon_web::Options { listen: args.listen, token, allowed_hosts: args.allow_host };
    let server = match axon_web::WebServer::start(config, options).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("axon web: {e:#}");
            return exit::FAILED;
        }
    };
    // Caught before anyone can know the address: a SIGTERM from then on
    // stops the server in order, and the page below is removed.
    let stop = CancellationToken::new();
    tokio::spawn(crate::serve_cmd::stop_on_signal(stop.clone()));
    let url = server.url();
    {
        // A closed stdout must not end the server: the address is also
        // what the user reads here.
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{url}").and_then(|()| stdout.flush());
    }
    eprintln!("axon web: serving {} (Ctrl-C stops)", server.local_addr());
    let opened = if args.open { open_browser(&url, server.local_addr().port()) } else { None };
    let served = server.serve(stop).await;
    if let Some(page) = opened {
        let _ = std::fs::remove_file(page);
    }
    match served {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon web: {e:#}");
            exit::FAILED
        }
    }
}

fn usage(message: &str) -> u8 {
    eprintln!("axon web: {message}");
    exit::USAGE
}

/// Hands the page to the desktop's opener through a file only this user
/// can read that redirects to the address: on a command line the token
/// would be readable by every local user for the browser's whole life
/// (`/proc/PID/cmdline`). The browser is the user's and outlives axon, so
/// it is not put in axon's process groups. Returns the file, removed when
/// the server stops.
fn open_browser(url: &str, port: u16) -> Option<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let page = std::env::temp_dir().join(format!("axon-web-{port}-{}.html", std::process::id()));
    let written =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&page).and_then(
            |mut file| {
                writeln!(
                    file,
                    "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" \
                 content=\"0;url={url}\"><title>axon web</title><a href=\"{url}\">Open axon web</a>"
                )
            },
        );
    if let Err(e) = written {
        eprintln!("axon web: cannot write {}: {e}; open the address above", page.display());
        return None;
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let child = std::process::Command::new(opener)
        .arg(&page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            // Reaped when it is done (openers return at once), never waited on.
            tokio::task::spawn_blocking(move || {
                let _ = child.wait();
            });
        }
        Err(e) => {
            eprintln!("axon web: cannot open a browser ({opener}: {e}); open the address above")
        }
    }
    Some(page)
}
