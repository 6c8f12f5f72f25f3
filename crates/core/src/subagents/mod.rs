//! Subagents, as Claude Code and Gemini CLI define them: helpers the agent
//! starts with a tool call, each with its own conversation, its own tool
//! subset and budget, whose final report is the call's result.
//!
//! `defs` parses a definition file's text (the runtime reads the files);
//! `tool` makes each a tool (and the generic `task`); `run` runs one under
//! its parent's permissions and reports its events nested in the parent's.

pub mod defs;
mod run;
mod tool;

pub use defs::{AgentDefinition, axon_tool_name, parse_definition, resolve_tools};
pub use run::MAX_DEPTH;
pub use tool::{
    ConnectFuture, ConnectModel, DEFAULT_MAX_ITERATIONS, DEFAULT_TOKEN_BUDGET, SubagentSettings,
    register_subagents,
};
