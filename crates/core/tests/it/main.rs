//! The integration tests of `axon-core`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod agent_loop;
mod common;
mod compaction_carry;
mod context_properties;
mod fallback_requests;
mod guidance_properties;
mod lifecycle;
mod peer_aimock;
mod peer_llmock;
mod plan_properties;
mod real_servers;
mod secrets;
mod seed_properties;
mod small_window;
mod subagents;
mod tool_images;
