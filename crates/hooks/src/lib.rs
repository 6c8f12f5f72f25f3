//! Command hooks with the contract Claude Code, Codex CLI and Gemini CLI
//! share, so a user's existing hooks run unchanged.
//!
//! - [`HookEvent`]: SessionStart, UserPromptSubmit, PreToolUse,
//!   PostToolUse, Stop, SubagentStop, PreCompact, Notification, SessionEnd.
//! - Configuration ([`HooksConfig`]): axon's `[[hooks.EVENT]]` TOML tables
//!   and the `hooks` section of Claude Code's `settings.json`, one model.
//!   [`Hooks::load`] reads files in order ([`claude_settings_files`] lists
//!   Claude's: the user's, then the workspace's); every hook remembers its
//!   [`HookSource`], and whether it came with the workspace.
//! - [`Matcher`]: empty or `*` for all, else an anchored regex over the
//!   tool name, in axon's or Claude's spelling ([`names`]: `Bash` matches
//!   `shell`, `mcp__server__tool` matches `mcp_server_tool`).
//! - [`Hooks::run`]: the matching hooks of an event run at once, each with
//!   a [`HookInput`]'s JSON on stdin; exit 0 (with an optional JSON
//!   reply), exit 2 (block, stderr is the reason) and anything else (a
//!   warning) are combined into one [`HookOutcome`].
//!
//! - [`fingerprint`]: what consent to a workspace hook is remembered for;
//!   [`Hooks::pin_workspace`] makes every run of a workspace hook check it
//!   first, and [`Hooks::with_workspace_sandbox`] runs them sandboxed.
//!
//! This crate decides nothing about consent or policy: the caller asks the
//! user about workspace hooks ([`Hooks::retain`]) and obeys the outcome.

mod config;
mod event;
pub mod fingerprint;
mod hooks;
mod matcher;
pub mod names;
mod outcome;
mod run;

pub use config::{CommandHook, ConfigError, DEFAULT_TIMEOUT_SECS, HooksConfig, MatcherGroup};
pub use event::{
    CompactTrigger, EndReason, EventData, HookEvent, HookInput, NotificationKind, SessionSource,
};
pub use fingerprint::{Fingerprint, fingerprint};
pub use hooks::{
    HookEntry, HookFile, HookSource, Hooks, HooksError, Readmit, SourceFormat,
    claude_settings_files,
};
pub use matcher::Matcher;
pub use outcome::{HookOutcome, Permission};
pub use run::OUTPUT_CAP;
