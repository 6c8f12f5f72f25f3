//! nova-sync: agents report their execution steps to a task manager.
//!
//! - [`model`]: the API's types (`docs/openapi.yaml`) and the uniform reply.
//! - [`client`]: the Task Manager over HTTP, or in memory (`USE_MOCK_CLIENT`).
//! - [`mcp`]: the MCP server with the four tools agents call.
//! - [`api`]: the Task Manager API itself (`nova-sync api`).
//! - [`store`]: where the API keeps its data: SQLite or PostgreSQL.

pub mod api;
pub mod client;
pub mod mcp;
pub mod model;
pub mod store;
