//! The integration tests of `axon-runtime`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod background_list;
mod common;
mod fallback;
mod guidance_properties;
mod lost_files;
mod mcp_startup;
mod model_switch;
mod notification_hooks;
mod replay;
mod resumed_cost;
mod sandbox_events;
mod secrets;
mod session_events;
mod session_images;
mod subagents;
mod telemetry;
mod web_tools;
mod workspace_config;
