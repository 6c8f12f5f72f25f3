//! The integration tests of `axon-testkit`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod mcp_client_requests;
mod mcp_conformance;
mod mcp_oauth_session;
