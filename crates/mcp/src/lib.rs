//! axon's MCP side.
//!
//! - [`config`]: MCP servers as users already describe them: a workspace
//!   `.mcp.json` (`mcpServers`, the format other MCP hosts write) and
//!   `[mcp_servers.NAME]` tables in axon's TOML config.
//! - [`naming`]: how an MCP tool is named for the model
//!   (`mcp_{server}_{tool}`), and why that name maps back by table.
//! - [`McpManager`]: every configured server started at once, in the
//!   background, on the official SDK (`rmcp`), each with a status; their
//!   tools join the agent's [`ToolRegistry`](axon_tools::ToolRegistry) as
//!   they become ready and as their lists change.
//! - [`host`]: what servers ask of the client (a model's answer, the
//!   user's), answered by the program through [`host::ClientHost`]; and
//!   their progress, routed to the call it is about.
//! - [`auth`]: signing in to HTTP servers with OAuth (`axon mcp login`),
//!   their tokens kept in the user's data folder.
//! - [`server`]: the other direction, a `ToolRegistry` served to any MCP host
//!   over stdio or streamable HTTP (`axon mcp serve`).

pub mod auth;
mod call;
mod client;
pub mod config;
mod content;
mod errors;
pub mod host;
mod http_client;
mod manager;
pub mod naming;
mod requests;
mod resource_tool;
pub mod server;
mod server_state;
mod spawn;
mod startup;

pub use errors::McpErrorKind;
pub use manager::{McpManager, ServerState, ServerStatus, StatusObserver};
pub use resource_tool::READ_RESOURCE;
