//! Who decides whether a tool that changes things may run: standing
//! [`Permissions`] (rules, the sandbox) first, then the approval policy,
//! then the user through an [`Approver`].

use std::future::Future;
use std::pin::Pin;

use axon_protocol::{ToolCall, ToolSpec};

/// The standing rule for tools that are not read-only (writes, edits,
/// commands, MCP tools).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Run them.
    #[default]
    Auto,
    /// Refuse them; the model is told why.
    ReadOnly,
    /// Ask the front end's [`Approver`] each time.
    Ask,
}

impl ApprovalPolicy {
    /// The stricter of two policies (read-only, then ask, then auto).
    pub fn stricter(self, other: ApprovalPolicy) -> ApprovalPolicy {
        let rank = |p| match p {
            ApprovalPolicy::ReadOnly => 2,
            ApprovalPolicy::Ask => 1,
            ApprovalPolicy::Auto => 0,
        };
        if rank(self) >= rank(other) { self } else { other }
    }

    /// Whether a tool is offered to the model: a read-only session offers
    /// only the tools that read (it would refuse the others).
    pub fn offers(self, spec: &ToolSpec) -> bool {
        self != ApprovalPolicy::ReadOnly || spec.annotations.read_only
    }
}

impl From<axon_protocol::ApprovalMode> for ApprovalPolicy {
    fn from(mode: axon_protocol::ApprovalMode) -> Self {
        match mode {
            axon_protocol::ApprovalMode::Ask => ApprovalPolicy::Ask,
            axon_protocol::ApprovalMode::Auto => ApprovalPolicy::Auto,
            axon_protocol::ApprovalMode::ReadOnly => ApprovalPolicy::ReadOnly,
        }
    }
}

impl From<ApprovalPolicy> for axon_protocol::ApprovalMode {
    fn from(policy: ApprovalPolicy) -> Self {
        match policy {
            ApprovalPolicy::Ask => axon_protocol::ApprovalMode::Ask,
            ApprovalPolicy::Auto => axon_protocol::ApprovalMode::Auto,
            ApprovalPolicy::ReadOnly => axon_protocol::ApprovalMode::ReadOnly,
        }
    }
}

/// An approval policy a front end can change while a turn runs (the
/// agent reads it before each call it checks and each request it sends).
#[derive(Debug, Default)]
pub struct SharedApproval(std::sync::atomic::AtomicU8);

impl SharedApproval {
    pub fn get(&self) -> ApprovalPolicy {
        match self.0.load(std::sync::atomic::Ordering::Acquire) {
            x if x == ApprovalPolicy::Ask as u8 => ApprovalPolicy::Ask,
            x if x == ApprovalPolicy::ReadOnly as u8 => ApprovalPolicy::ReadOnly,
            _ => ApprovalPolicy::Auto,
        }
    }

    pub fn set(&self, policy: ApprovalPolicy) {
        self.0.store(policy as u8, std::sync::atomic::Ordering::Release);
    }
}

/// A front end's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    /// Allow this tool for the rest of the session.
    AllowTool,
    /// Refuse, with a reason the model sees.
    Deny(String),
    /// Refuse this tool for the rest of the session, with a reason the
    /// model sees.
    DenyTool(String),
}

/// Asks the user. Implemented by front ends (a terminal prompt, a TUI card,
/// an editor dialog).
pub trait Approver: Send + Sync {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        spec: &'a ToolSpec,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;
}

/// What standing permissions say of one call that changes things, before
/// the approval policy is consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Runs without asking (an allow rule; a command the sandbox confines).
    /// A read-only session still refuses it.
    Allow,
    /// The approval policy decides (ask, auto or read-only).
    Policy,
    /// Asked even when the policy runs everything (an ask rule; a command
    /// that would run outside the sandbox). Without anyone to ask it is
    /// refused with this reason, which says how to allow it.
    Confirm(String),
    /// Refused with this reason (a deny rule), whatever the policy.
    Deny(String),
    /// A command that would run outside the sandbox: asked like `Confirm`
    /// (with `ask` as the reason), except under the auto policy (`--yes`:
    /// the user allowed commands, not leaving the sandbox), where
    /// `under_auto` decides.
    LeaveSandbox { ask: String, under_auto: UnderAuto },
}

/// What a request to leave the sandbox gets under the auto policy; the
/// user's config chooses (`[sandbox] unsandboxed_under_yes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnderAuto {
    /// Refused with this reason, which names the setting that allows it.
    Refuse(String),
    /// Asked, as without `--yes` (refused when no one can answer).
    Ask,
    /// Runs unconfined without asking.
    Allow,
}

/// Standing permissions: rules from the config files and the workspace's
/// trust file, and what the sandbox makes safe. Implemented by the runtime.
pub trait Permissions: Send + Sync {
    fn gate(&self, call: &ToolCall, spec: &ToolSpec) -> Gate;
}
