//! axon as an Agent Client Protocol agent (`axon acp`): editors and note
//! apps (Zed, JetBrains IDEs, Neovim, Emacs, Obsidian) drive axon sessions
//! over stdio with newline-delimited JSON-RPC, protocol version 1.
//!
//! A thin front end: each ACP session is one [`axon_runtime`] session.
//! Requests become the runtime's operations, its events become
//! `session/update`s ([`updates`]), approvals become
//! `session/request_permission`, and when the editor offers to, file tools
//! read and write through it ([`fs`]); the model is a session config
//! option a client can set (`models`). Nothing but ACP is written to the
//! output; what is worth logging goes to the caller's [`Log`].
//!
//! The wire types are the official `agent-client-protocol-schema` crate's;
//! the JSON-RPC loop ([`rpc`]) is ours, on the one tokio runtime.

mod agent;
mod auth;
mod commands;
mod forward;
mod fs;
mod models;
mod prompt;
pub mod rpc;
mod session;
pub mod updates;

use std::path::PathBuf;
use std::sync::Arc;

pub use agent::serve;
use axon_runtime::Profile;

/// Where a line worth logging goes (the CLI: stderr).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// What `axon acp`'s flags chose for every session.
#[derive(Debug, Clone)]
pub struct Options {
    /// Relative `cwd`s are taken from here.
    pub dir: PathBuf,
    pub profile: Option<Profile>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub max_iterations: Option<u32>,
    /// The sandbox mode commands run in (else the config's).
    pub sandbox: Option<axon_protocol::SandboxMode>,
}

/// What every session sends through.
#[derive(Clone)]
pub(crate) struct Outbound {
    pub(crate) out: rpc::Outgoing,
    pub(crate) peer: Arc<rpc::Peer>,
    pub(crate) log: Log,
}
