//! The integration tests of `axon-mcp`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod everything;
mod everything_more;
mod http_client_order;
mod live_servers;
mod reference_servers;
mod seed001_mcp;
mod served_secrets;
mod server_bounds;
mod stdio_start;
