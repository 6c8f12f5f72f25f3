//! axon's MCP side.
//!
//! - [`config`]: MCP servers as users already describe them: a workspace
//!   `.mcp.json` (`mcpServers`, the format other MCP hosts write) and
//!   `[mcp_servers.NAME]` tables in axon's TOML config.
//! - [`naming`]: how an MCP tool is named for the model
//!   (`mcp_{server}_{tool}`), and why that name maps back by table.

pub mod config;
pub mod naming;
