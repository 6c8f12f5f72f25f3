//! One axon session for every front end.
//!
//! A front end (`axon run`, the terminal UI, `axon mcp serve`'s
//! `axon_run`, an editor or a browser panel) builds a [`SessionConfig`]
//! (the config files' layers and its own flags), opens a [`Session`] with
//! [`open`], sends it [`Op`](axon_protocol::Op)s and renders the
//! [`AgentEvent`](axon_protocol::AgentEvent)s that come out. Everything
//! else is here, once: the provider, the tools and MCP servers, rules and
//! skills, the saved session, approvals with previews (`approvals/`), plan
//! mode's policy (`plan/`), compaction and cancellation.
//!
//! It is its own crate, not part of `axon-core`, because it wires together
//! what core must not depend on: MCP servers (`axon-mcp`), the session
//! store (`axon-store`) and the config files. `axon-core` stays the agent
//! loop, testable with a provider and a tool registry alone.

mod agent_files;
mod approvals;
mod attach;
pub mod config;
pub mod doctor;
mod events;
mod fallbacks;
pub mod guidance;
mod guidance_files;
pub mod hook_files;
pub mod import;
mod journal;
mod lifecycle;
mod live_tools;
pub mod local_model;
pub mod mcp_edit;
pub mod mcp_host;
pub mod mentions;
mod meter;
mod model_switch;
pub mod paste;
mod plan;
mod project;
mod replay;
pub mod rewind;
mod rewind_op;
mod run_tool;
pub mod safety_config;
pub mod sandbox;
pub mod saved_rules;
pub mod serve;
pub mod servers;
mod session;
mod session_config;
mod setup;
mod skill_clone;
pub mod skill_files;
mod subagents;
pub mod telemetry;
pub mod trajectory;
pub mod web_config;
mod workspace_layer;

pub use approvals::SessionControl;
pub use attach::user_image;
pub use config::{NoProvider, SEE_CONFIG_SHOW};
pub use events::{Emitter, Events, channel};
pub use journal::{SessionChoice, secrets};
pub use local_model::connect;
pub use meter::recorded_cost;
pub use plan::plan_text;
pub use project::Project;
pub use run_tool::{RunTool, RunToolArgs};
pub use servers::{AskConsent, ServerConsent};
pub use session::{MAX_REVISIONS, Session, SessionHandle};
pub use session_config::{OfferedModels, SessionConfig, choose_profile};
pub use setup::open;
pub use web_config::hand_tools;

// What a front end names from the crates below the runtime, so that it
// depends on the runtime and the protocol alone.
pub use axon_core::ApprovalPolicy;
pub use axon_hooks::EndReason;
pub use axon_llm::{
    DEFAULT_CONTEXT_WINDOW, KnownProvider, LlmError, PROVIDERS, default_max_tokens,
    known_context_window, known_provider, provider_names, takes_images,
};
pub use axon_mcp::config::{DEFAULT_STARTUP_TIMEOUT, ServerConfig, Transport};
pub use axon_permissions::{SECRET_FILES, Trust, trust_path};
pub use axon_protocol::Utc;
pub use axon_store::{
    SessionStore, SessionSummary, StoreError, new_session_id, to_json, to_markdown,
};
pub use axon_tools::{
    Buffers, Profile, ToolContext, ToolRegistry, Workspace, atomic_write, patch_paths,
};

/// MCP for the commands that use servers by hand (`axon mcp list`, `call`,
/// `login`) and that serve tools (`axon mcp serve`).
pub mod mcp {
    pub use axon_mcp::auth::{LOGIN_WAIT, login, login_command, logout};
    pub use axon_mcp::server::http::{
        DEFAULT_MAX_SESSIONS, HttpOptions, HttpServer, SessionLimits,
    };
    pub use axon_mcp::server::{ToolServer, serve_stdio};
    pub use axon_mcp::{McpManager, ServerState};
}

/// What a binary does for the children of its whole process: adopt the
/// orphans, keep secrets out of `/proc`, and kill what is left at exit.
pub mod process {
    pub use axon_process::{
        EnvPolicy, become_subreaper, hide_environment, kill_all, start_guardian_early,
    };
}

/// The local model store (`axon models`).
pub mod models {
    pub use axon_models::{
        DEFAULT_SOURCE, ModelError, ModelStore, Progress, PullOptions, Source, StoredModel,
    };
}
