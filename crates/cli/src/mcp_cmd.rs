//! `axon mcp list | tools | call | login | …`: the workspace's MCP servers by
//! hand. Naming a server is consent to start it. `axon mcp login NAME` signs
//! in to an HTTP server (OAuth, in the browser) and `logout` forgets its
//! tokens. `add` and `remove` edit a config file (`axon_runtime::mcp_edit`).
//! `axon mcp serve` is the other direction and lives in `serve_cmd`.

use std::path::PathBuf;

use std::io::IsTerminal;

use axon_runtime::mcp::{McpManager, ServerState};
use axon_runtime::{Project, ServerConfig};
use clap::Subcommand;
use serde_json::Value;

use crate::config::Dirs;
use crate::{exit, say};
use axon_runtime::mcp_edit::{self, NewServer, Scope};

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve this workspace's tools to other MCP hosts, over stdio or HTTP.
    Serve(crate::serve_cmd::ServeArgs),
    /// Start the configured MCP servers and show each one's status.
    List {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// Trust every server of this workspace (remembered for exactly what
        /// each runs) instead of asking.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Trust a server of this workspace's .mcp.json or .axon/config.toml, for
    /// exactly what it runs now (a changed command is asked about again).
    Trust {
        name: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// List the tools of one server, or of all.
    Tools {
        server: Option<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// List the resources of one server, or of all.
    Resources {
        server: Option<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Read one resource.
    Read {
        server: String,
        uri: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// List the prompts of one server, or of all.
    Prompts {
        server: Option<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Get one prompt, filled in with JSON arguments.
    Prompt {
        server: String,
        name: String,
        arguments: Option<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Add a server: `add NAME -- COMMAND ARGS…` for a local server, `add
    /// NAME --url URL` for a remote one. `--scope project` (the default)
    /// writes the workspace's .mcp.json and trusts the server as it is now;
    /// `--scope user` your own config.toml (every workspace, no trust needed).
    Add {
        name: String,
        /// Where the server is written: `project` (.mcp.json) or `user`
        /// (your config.toml).
        #[arg(long, value_enum, default_value_t = AddScope::Project)]
        scope: AddScope,
        /// The server's streamable HTTP endpoint.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// An HTTP header as NAME=VALUE (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
        headers: Vec<String>,
        /// An environment variable for a local server as NAME=VALUE (repeatable).
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The command that starts a local server, and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Sign in to an HTTP server with OAuth: opens the browser (and prints
    /// the URL), then keeps the tokens in your data folder.
    Login {
        name: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// Only print the URL; do not try to open a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the tokens `axon mcp login` kept for a server.
    Logout {
        name: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Remove a server from the workspace's .mcp.json.
    Remove {
        name: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Call one tool of one server with JSON arguments (`-` reads stdin).
    Call {
        server: String,
        tool: String,
        arguments: Option<String>,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// Print the output as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `axon mcp add --scope`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum AddScope {
    /// Your own config.toml: every workspace.
    User,
    /// The workspace's .mcp.json.
    Project,
}

pub async fn run(command: McpCommand) -> u8 {
    // Editing the file needs no server.
    match command {
        McpCommand::Add { name, scope, url, headers, env, command, dir } => {
            let server = NewServer { name, url, headers, env, command };
            let scope = match scope {
                AddScope::User => Scope::User,
                AddScope::Project => Scope::Project,
            };
            let added = Dirs::from_env()
                .map_err(|e| format!("{e:#}"))
                .and_then(|dirs| mcp_edit::add(&dirs, &dir, scope, &server));
            return report(added);
        }
        McpCommand::Remove { name, dir } => return report(mcp_edit::remove(&dir, &name)),
        McpCommand::Trust { name, dir } => {
            return report(trust(&dir, Some(&name)).map_err(|e| format!("{e:#}")));
        }
        McpCommand::List { ref dir, yes: true } => {
            if let Err(code) = report_err(trust(dir, None)) {
                return code;
            }
        }
        McpCommand::Serve(args) => return crate::serve_cmd::run(args).await,
        _ => {}
    }
    let dir = match &command {
        McpCommand::List { dir, .. }
        | McpCommand::Trust { dir, .. }
        | McpCommand::Tools { dir, .. }
        | McpCommand::Resources { dir, .. }
        | McpCommand::Read { dir, .. }
        | McpCommand::Prompts { dir, .. }
        | McpCommand::Prompt { dir, .. }
        | McpCommand::Call { dir, .. }
        | McpCommand::Add { dir, .. }
        | McpCommand::Login { dir, .. }
        | McpCommand::Logout { dir, .. }
        | McpCommand::Remove { dir, .. } => dir.clone(),
        McpCommand::Serve(_) => return exit::USAGE,
    };
    let project = match Project::load(&dir) {
        Ok(project) => project,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let named = match &command {
        McpCommand::Tools { server: Some(name), .. }
        | McpCommand::Resources { server: Some(name), .. }
        | McpCommand::Prompts { server: Some(name), .. }
        | McpCommand::Call { server: name, .. }
        | McpCommand::Read { server: name, .. }
        | McpCommand::Prompt { server: name, .. } => Some(name.clone()),
        _ => None,
    };
    match &command {
        McpCommand::Login { name, no_browser, .. } => {
            return crate::mcp_login::login(&project, name, *no_browser).await;
        }
        McpCommand::Logout { name, .. } => return crate::mcp_login::logout(&project, name),
        _ => {}
    }
    let servers = match choose_servers(named.as_deref(), &project) {
        Ok(servers) => servers,
        Err(code) => return code,
    };
    // Servers that ask for the sandbox (`sandbox = true`) get the one a
    // session here would give its commands, or do not start.
    let manager = match project.start_servers(servers).await {
        Ok(manager) => manager,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    // Ctrl-C still shuts the servers down: they run in their own process
    // groups, out of the terminal's reach.
    let code = tokio::select! {
        code = execute(&manager, command) => code,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("axon: cancelled");
            130
        }
    };
    manager.shutdown().await;
    code
}

/// The servers a command starts (`Project::servers_to_run`): a workspace's
/// untrusted ones after a yes at the terminal.
fn choose_servers(named: Option<&str>, project: &Project) -> Result<Vec<ServerConfig>, u8> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut ask =
        |_: &ServerConfig, question: &str| interactive && crate::run_cmd::confirm(question);
    let mut note = |message: String| eprintln!("axon: {message}");
    project.servers_to_run(named, &mut ask, &mut note).map_err(|message| {
        eprintln!("axon: {message}");
        exit::USAGE
    })
}

async fn execute(manager: &McpManager, command: McpCommand) -> u8 {
    match command {
        McpCommand::List { .. } => list(manager),
        McpCommand::Tools { server, .. } => tools(manager, server.as_deref()),
        McpCommand::Call { server, tool, arguments, json, .. } => {
            call(manager, &server, &tool, arguments.as_deref(), json).await
        }
        McpCommand::Resources { server, .. } => resources(manager, server.as_deref()).await,
        McpCommand::Read { server, uri, .. } => {
            print_output(&manager.read_resource(&server, &uri).await)
        }
        McpCommand::Prompts { server, .. } => prompts(manager, server.as_deref()).await,
        McpCommand::Prompt { server, name, arguments, .. } => {
            prompt(manager, &server, &name, arguments.as_deref()).await
        }
        McpCommand::Add { .. }
        | McpCommand::Login { .. }
        | McpCommand::Logout { .. }
        | McpCommand::Remove { .. }
        | McpCommand::Trust { .. }
        | McpCommand::Serve(_) => exit::OK,
    }
}

fn list(manager: &McpManager) -> u8 {
    let width = manager.statuses().iter().map(|s| s.name.len()).max().unwrap_or(0);
    for status in manager.statuses() {
        let line = match &status.state {
            ServerState::Ready => format!(
                "✓ {:width$}  ready   {} tools  (protocol {})",
                status.name,
                status.tools,
                status.protocol_version.as_deref().unwrap_or("?")
            ),
            ServerState::Error(message) => {
                let indented = message.replace('\n', "\n      ");
                format!("✗ {:width$}  failed  {indented}", status.name)
            }
            ServerState::NeedsLogin(_) => format!(
                "! {:width$}  needs login: run `{}`",
                status.name,
                axon_runtime::mcp::login_command(&status.name)
            ),
            other => format!("  {:width$}  {other:?}", status.name),
        };
        say(&line);
    }
    exit::OK
}

fn tools(manager: &McpManager, only: Option<&str>) -> u8 {
    let statuses = manager.statuses();
    if let Some(name) = only
        && !statuses.iter().any(|s| s.name == name)
    {
        eprintln!("axon: no MCP server named '{name}' is configured");
        return exit::USAGE;
    }
    for status in statuses.iter().filter(|s| only.is_none_or(|n| n == s.name)) {
        for (tool, description) in manager.tools_of(&status.name) {
            let summary = description.lines().next().unwrap_or("");
            say(&format!("{}  {tool}  {summary}", status.name));
        }
    }
    exit::OK
}

async fn call(
    manager: &McpManager,
    server: &str,
    tool: &str,
    arguments: Option<&str>,
    json: bool,
) -> u8 {
    if !manager.statuses().iter().any(|s| s.name == server) {
        eprintln!("axon: no MCP server named '{server}' is configured");
        return exit::USAGE;
    }
    let arguments = match crate::tool_cmd::parse_arguments(arguments) {
        Ok(value) => value,
        Err(message) => {
            eprintln!("axon: {message}");
            return exit::USAGE;
        }
    };
    let output = manager.call(server, tool, arguments).await;
    if json {
        say(&serde_json::to_string(&output)
            .unwrap_or_else(|e| Value::String(e.to_string()).to_string()));
    } else if output.is_error {
        eprintln!("{}", output.text_content());
    } else {
        say(&output.text_content());
    }
    if output.is_error { exit::FAILED } else { exit::OK }
}

fn print_output(output: &axon_protocol::ToolOutput) -> u8 {
    if output.is_error {
        eprintln!("{}", output.text_content());
        exit::FAILED
    } else {
        say(&output.text_content());
        exit::OK
    }
}

/// The servers a listing covers: one by name, or every ready one.
fn chosen(manager: &McpManager, only: Option<&str>) -> Result<Vec<String>, u8> {
    let statuses = manager.statuses();
    match only {
        Some(name) if !statuses.iter().any(|s| s.name == name) => {
            eprintln!("axon: no MCP server named '{name}' is configured");
            Err(exit::USAGE)
        }
        Some(name) => Ok(vec![name.to_string()]),
        None => Ok(statuses
            .into_iter()
            .filter(|s| s.state == ServerState::Ready)
            .map(|s| s.name)
            .collect()),
    }
}

/// Prints `lines` for each chosen server; a server that fails is reported
/// and the others are still listed.
async fn list_each<Fut>(
    manager: &McpManager,
    only: Option<&str>,
    lines: impl Fn(String) -> Fut,
) -> u8
where
    Fut: std::future::Future<Output = Result<Vec<String>, String>>,
{
    let servers = match chosen(manager, only) {
        Ok(servers) => servers,
        Err(code) => return code,
    };
    let mut code = exit::OK;
    for server in servers {
        match lines(server).await {
            Ok(lines) => lines.iter().for_each(|line| say(line)),
            Err(message) => {
                eprintln!("axon: {message}");
                code = exit::FAILED;
            }
        }
    }
    code
}

async fn resources(manager: &McpManager, only: Option<&str>) -> u8 {
    list_each(manager, only, async |server| {
        let list = manager.list_resources(&server).await?;
        Ok(list
            .into_iter()
            .map(|(uri, name, description)| {
                format!("{server}  {uri}  {name}  {}", description.lines().next().unwrap_or(""))
            })
            .collect())
    })
    .await
}

async fn prompts(manager: &McpManager, only: Option<&str>) -> u8 {
    list_each(manager, only, async |server| {
        let list = manager.list_prompts(&server).await?;
        Ok(list
            .into_iter()
            .map(|(name, description, arguments)| {
                let arguments = if arguments.is_empty() {
                    String::new()
                } else {
                    format!("({})", arguments.join(", "))
                };
                format!("{server}  {name}{arguments}  {}", description.lines().next().unwrap_or(""))
            })
            .collect())
    })
    .await
}

async fn prompt(manager: &McpManager, server: &str, name: &str, arguments: Option<&str>) -> u8 {
    let arguments = match crate::tool_cmd::parse_arguments(arguments) {
        Ok(Value::Object(map)) => map,
        Ok(_) => Default::default(),
        Err(message) => {
            eprintln!("axon: {message}");
            return exit::USAGE;
        }
    };
    match manager.get_prompt(server, name, arguments).await {
        Ok(text) => {
            say(&text);
            exit::OK
        }
        Err(message) => {
            eprintln!("axon: {message}");
            exit::FAILED
        }
    }
}

fn report(result: Result<String, String>) -> u8 {
    match result {
        Ok(message) => {
            say(&message);
            exit::OK
        }
        Err(message) => {
            eprintln!("axon: {message}");
            exit::USAGE
        }
    }
}

/// Trusts the workspace server `name` (every one without a name), for
/// exactly what it runs now, in the trust file under the user's data folder.
fn trust(dir: &std::path::Path, name: Option<&str>) -> anyhow::Result<String> {
    Ok(Project::load(dir)?.trust_servers(name)?.join("\n"))
}

/// Like `report` for a step before others: prints an error and gives the
/// exit code, or says what was done and lets the command go on.
fn report_err(result: anyhow::Result<String>) -> Result<(), u8> {
    match result {
        Ok(text) => {
            if !text.is_empty() {
                eprintln!("axon: {text}");
            }
            Ok(())
        }
        Err(e) => {
            eprintln!("axon: {e:#}");
            Err(exit::USAGE)
        }
    }
}
