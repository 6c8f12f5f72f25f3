//! The integration tests of `axon-cli`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod acp_sdk;
mod acp_wire;
mod atif_cli;
mod chat_tmux;
mod common;
mod doctor_cli;
mod guidance_cli;
mod hooks_rewind;
mod import_cli;
mod local_model;
mod mcp_cli;
mod mcp_oauth;
mod mcp_serve;
mod model_servers_cli;
mod models_cli;
mod plan_cli;
mod rewind_report;
mod run_cli;
mod run_terminal;
mod sandbox_cli;
mod secrets_cli;
mod secrets_run;
mod sessions_cli;
mod telemetry_cli;
mod tool_cli;
mod web_attention;
mod web_browser;
mod web_http;
mod web_rewind;
