//! `nova-sync`: the MCP server (stdio, or `--http ADDR`), and `nova-sync
//! api`, the Task Manager API it reports to.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::SocketAddr;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "nova-sync", version, about)]
struct Cli {
    /// Serve MCP over streamable HTTP at ADDR (e.g. 127.0.0.1:8765) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the Task Manager API on SQLite or PostgreSQL.
    Api {
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// The SQLite file (created when missing; `:memory:` for none), or a
        /// PostgreSQL URL (`postgres://user@host/db`) several API processes
        /// can share. Default: DATABASE_URL when set, else nova.db.
        #[arg(long, env = "DATABASE_URL", hide_env_values = true, default_value = "nova.db")]
        db: String,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("nova-sync: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime
        .block_on(run(cli.http, cli.command.map(|Command::Api { listen, db }| (listen, db))));
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nova-sync: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(http: Option<SocketAddr>, api: Option<(SocketAddr, String)>) -> Result<(), String> {
    use rmcp::ServiceExt;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    if let Some((listen, db)) = api {
        let db = nova::store::Db::connect(&db)
            .await
            .map_err(|e| format!("cannot open the database {}: {e}", nova::store::redacted(&db)))?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!(
            "nova-sync: Task Manager API at http://{addr}/api (page at http://{addr}/), on {}",
            db.store().kind()
        );
        return axum::serve(listener, nova::api::router(db))
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
            .map_err(|e| e.to_string());
    }
    let client = nova::client::from_env(
        std::env::var("USE_MOCK_CLIENT").ok().as_deref(),
        std::env::var("TASK_MANAGER_URL").ok().as_deref(),
    );
    let server = nova::mcp::NovaServer::new(client, std::env::var("NOVA_EXECUTION_ID").ok());
    match http {
        None => {
            let running =
                server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
            tokio::select! {
                result = running.waiting() => result.map(|_| ()).map_err(|e| e.to_string()),
                () = shutdown.cancelled() => Ok(()),
            }
        }
        Some(addr) => {
            use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
            use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
            let mut config = StreamableHttpServerConfig::default();
            config.cancellation_token = shutdown.child_token();
            let sessions = std::sync::Arc::new(LocalSessionManager::default());
            let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
            let router = axum::Router::new().route_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            eprintln!(
                "nova-sync: MCP at http://{}/mcp",
                listener.local_addr().map_err(|e| e.to_string())?
            );
            axum::serve(listener, router)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await
                .map_err(|e| e.to_string())
        }
    }
}
