//! axon's MCP side.
//!
//! - [`config`]: MCP servers as users already describe them: a workspace
//!   `.mcp.json` (`mcpServers`, the format other MCP hosts write) and
//!   `[mcp_servers.NAME]` tables in axon's TOML config.
//! - [`naming`]: how an MCP tool is named for the model
//!   (`mcp_{server}_{tool}`), and why that name maps back by table.
//! - [`McpManager`]: every configured server started at once on the official
//!   SDK (`rmcp`), each with a status; their tools join the agent's
//!   [`ToolRegistry`](axon_tools::ToolRegistry).
//! - [`auth`]: signing in to HTTP servers with OAuth (`axon mcp login`),
//!   their tokens kept in the user's data folder.
//! - [`server`]: the other direction, a `ToolRegistry` served to any MCP host
//!   over stdio or streamable HTTP (`axon mcp serve`).

pub mod auth;
mod client;
pub mod config;
mod content;
mod errors;
mod http_client;
mod manager;
pub mod naming;
mod process;
mod resource_tool;
pub mod server;
mod spawn;

pub use process::kill_all;

pub use errors::McpErrorKind;
pub use manager::{McpManager, ServerState, ServerStatus, StatusObserver};
pub use resource_tool::READ_RESOURCE;
