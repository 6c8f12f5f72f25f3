//! One axon session for every front end.
//!
//! A front end (`axon run`, the terminal UI, `axon mcp serve`'s
//! `axon_run`, an editor or a browser panel) builds a [`SessionConfig`]
//! (the config files' layers and its own flags), opens a [`Session`] with
//! [`open`], sends it [`Op`](axon_protocol::Op)s and renders the
//! [`AgentEvent`](axon_protocol::AgentEvent)s that come out. Everything
//! else is here, once: the provider, the tools and MCP servers, rules and
//! skills, the saved session, approvals with previews, plan mode's policy,
//! compaction and cancellation.
//!
//! It is its own crate, not part of `axon-core`, because it wires together
//! what core must not depend on: MCP servers (`axon-mcp`), the session
//! store (`axon-store`) and the config files. `axon-core` stays the agent
//! loop, testable with a provider and a tool registry alone.

pub mod agent_files;
mod approver;
pub mod attach;
pub mod config;
pub mod doctor;
mod events;
pub mod guidance;
pub mod guidance_files;
pub mod hook_files;
mod journal;
mod lifecycle;
mod live_tools;
pub mod local_model;
pub mod mcp_edit;
pub mod mcp_host;
pub mod mentions;
mod model_switch;
mod permissions;
mod plan_mode;
pub mod plan_text;
pub mod replay;
pub mod rewind;
mod rewind_op;
mod run_tool;
pub mod safety_config;
pub mod sandbox;
pub mod saved_rules;
pub mod servers;
mod session;
mod setup;
mod skill_clone;
pub mod skill_files;
mod subagents;
pub mod workspace_layer;

pub use approver::Shared;
pub use config::{NoProvider, SEE_CONFIG_SHOW};
pub use events::{Emitter, Events, channel};
pub use journal::{SessionChoice, secrets};
pub use local_model::connect;
pub use run_tool::{RunTool, RunToolArgs};
pub use servers::{AskConsent, ServerConsent};
pub use session::{MAX_REVISIONS, Session, SessionHandle};
pub use setup::{SessionConfig, choose_profile, open};

// What a front end names from the crates below the runtime, so that it
// depends on the runtime and the protocol alone.
pub use axon_llm::{
    KnownProvider, LlmError, PROVIDERS, known_provider, provider_names, takes_images,
};
pub use axon_mcp::config::{DEFAULT_STARTUP_TIMEOUT, ServerConfig, Transport};
pub use axon_protocol::Utc;
pub use axon_store::{SessionStore, SessionSummary, new_session_id, to_markdown};
pub use axon_tools::{Buffers, Profile, Workspace};
