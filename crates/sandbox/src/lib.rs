//! The OS sandbox for the commands axon runs (Linux: Landlock + seccomp).
//!
//! Use: [`probe`] once (cheap, cache it), [`Support::can_enforce`] to know
//! whether a [`Policy`] holds on this kernel (if not, ask the user before
//! every command instead), then per command [`prepare`] in the parent and
//! [`Prepared::apply`] (or [`Prepared::apply_tokio`]) on the command before
//! spawning it.
//!
//! Guarantees of a command spawned with a [`Prepared`] of mode
//! `read-only` or `workspace-write`, on a kernel where `can_enforce` is
//! `Ok`:
//! - it runs with `PR_SET_NO_NEW_PRIVS` (set-uid programs gain nothing),
//!   then a Landlock domain, then a seccomp filter, all installed between
//!   fork and exec; if any step fails the spawn fails, it never runs less
//!   confined;
//! - files: it reads and executes anything; it writes only the temp folder
//!   (exported as `TMPDIR`, `TMP`, `TEMP`), `/dev/null`-like devices and,
//!   in `workspace-write`, the workspace and the writable roots, except
//!   the protected entries ([`Policy::DEFAULT_PROTECTED`]: every
//!   repository's `.git`, nested ones and submodules included, and the
//!   files axon and Claude Code run code from). Where the kernel allows a
//!   mount namespace ([`Confinement::Namespace`]) these are bound
//!   read-only (of a git folder only `config`, `hooks`, `info`,
//!   `config.worktree`, `commondir`, so `git add` and `git commit` work)
//!   and everything else in the workspace can be created, removed and
//!   renamed; otherwise ([`Confinement::LandlockOnly`]) Landlock keeps
//!   them, and a folder holding one cannot gain or lose entries (see
//!   `landlock_rules` for the price). It makes no block or character
//!   device;
//! - it inherits no descriptor but 0, 1 and 2;
//! - network off: no socket but `AF_UNIX` (`EPERM`), no `connect` on any
//!   socket, no `sendto` to an address and no `AF_UNIX` datagram socket,
//!   so no Unix socket on the filesystem (the Docker daemon, the session
//!   bus) is reachable; TCP refused by Landlock too where the kernel has
//!   it, abstract Unix sockets scoped. `socketpair`, `bind`, `listen` and
//!   `accept` on stream sockets keep working;
//! - network on: with Landlock ABI 9+, Unix sockets on the filesystem are
//!   reachable only in the temp folder, the workspace and the writable
//!   roots; on older kernels every one the user can reach is, and that
//!   reaches outside the sandbox (see [`NOT_COVERED`]);
//! - it cannot signal processes outside its sandbox (Landlock ABI 6+),
//!   cannot ptrace, mount, load modules, use io_uring, bpf, namespaces,
//!   set the host name, change the limits or priority of another process
//!   (axon's included) or inject terminal input (seccomp, `EPERM`).
//!
//! Not confined (the kernel offers no rule for them): reading, changing
//! the mode, owner, timestamps or extended attributes of existing files,
//! resource use. Mode `off`: nothing at all, [`Prepared::apply`] leaves the
//! command untouched. Other systems than Linux: no sandbox; [`prepare`]
//! fails for the confining modes and `can_enforce` says so.
//!
//! All the work that allocates or opens paths happens in [`prepare`]; the
//! hook in the child only makes system calls, as code after `fork` in a
//! multi-threaded program must.

mod error;
pub mod explain;
#[cfg(target_os = "linux")]
mod hook;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod ns;
mod policy;
mod probe;
#[cfg(target_os = "linux")]
mod protect;
#[cfg(target_os = "linux")]
mod seccomp;
mod self_test;

use std::path::PathBuf;

pub use error::SandboxError;
pub use policy::{Mode, ParseModeError, Policy};
pub use probe::{
    Confinement, LANDLOCK_ONLY_PRICE, LINUX_ONLY, MIN_LANDLOCK_ABI, NOT_COVERED, Namespaces,
    Support, probe,
};
pub use self_test::self_test;

/// The names of the system calls refused in every confining mode.
#[cfg(target_os = "linux")]
pub fn refused_syscalls() -> impl Iterator<Item = &'static str> {
    seccomp::ALWAYS_REFUSED.iter().map(|(name, _)| *name)
}

/// The sentence a tool result carries when a sandboxed command had the
/// network off, so the model can tell the user instead of retrying.
pub fn network_off_note() -> &'static str {
    "The network is off in the sandbox (every socket but a Unix socketpair or listener is \
     refused with EPERM, and so is connecting any socket, Unix sockets such as the Docker or \
     D-Bus ones included); to allow it, the user can set `network = true` under `[sandbox]` in \
     the config, or run axon with `--sandbox off`."
}

/// One command's sandbox, built by [`prepare`] in the parent and consumed
/// by [`Prepared::apply`].
pub struct Prepared {
    /// Exported as `TMPDIR`, `TMP` and `TEMP`; `None` in mode `off`.
    temp: Option<PathBuf>,
    /// How the command is confined; `None` in mode `off`.
    confinement: Option<Confinement>,
    #[cfg(target_os = "linux")]
    armed: Option<hook::Armed>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("temp", &self.temp)
            .field("confinement", &self.confinement)
            .finish()
    }
}

/// Builds the sandbox of one command: validates `policy`, opens every path
/// its rules name and compiles the seccomp filter. Mode `off` yields a
/// [`Prepared`] that changes nothing.
///
/// It probes the kernel again (two system calls) and fails with
/// [`SandboxError::Unsupported`] whenever [`Support::can_enforce`] would,
/// so a caller that skipped that check still never gets a sandbox that
/// enforces less than the mode says.
pub fn prepare(policy: &Policy) -> Result<Prepared, SandboxError> {
    if policy.mode == Mode::Off {
        return Ok(Prepared::off());
    }
    policy.validate().map_err(SandboxError::Policy)?;
    imp::prepare(policy)
}

impl Prepared {
    /// A sandbox that changes nothing (mode `off`).
    pub fn off() -> Prepared {
        Prepared {
            temp: None,
            confinement: None,
            #[cfg(target_os = "linux")]
            armed: None,
        }
    }

    /// How the command will be confined (`None`: mode `off`).
    pub fn confinement(&self) -> Option<Confinement> {
        self.confinement
    }

    /// Whether spawning with this sandbox confines the command (false for
    /// mode `off`).
    pub fn confines(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.armed.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// Installs the confining hook on `command` (run in the child between
    /// fork and exec, after the hooks installed before it) and points
    /// `TMPDIR`, `TMP` and `TEMP` at the temp folder. If confinement fails
    /// in the child, `spawn` returns that step's OS error.
    pub fn apply(self, command: &mut std::process::Command) {
        if let Some(temp) = &self.temp {
            for name in ["TMPDIR", "TMP", "TEMP"] {
                command.env(name, temp);
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(mut armed) = self.armed {
            use std::os::unix::process::CommandExt;
            // SAFETY: `enter` runs in the forked child and only makes raw
            // system calls (unshare, mount, prctl, landlock_restrict_self,
            // seccomp, close_range) on data built before the fork: no
            // allocation, no lock (see hook.rs and ns.rs).
            #[allow(unsafe_code)]
            unsafe {
                command.pre_exec(move || armed.enter());
            }
        }
    }

    /// [`Prepared::apply`] for a tokio command.
    pub fn apply_tokio(self, command: &mut tokio::process::Command) {
        self.apply(command.as_std_mut());
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Confinement, Prepared, SandboxError, hook, landlock_rules, ns, protect, seccomp};
    use crate::policy::{Mode, Policy};

    pub(super) fn prepare(policy: &Policy) -> Result<Prepared, SandboxError> {
        // Without Landlock the crate would build a ruleset that enforces
        // nothing; refuse instead of pretending.
        let support = crate::probe();
        support.can_enforce(policy).map_err(SandboxError::Unsupported)?;
        let confinement = support.confinement(policy);
        let (kept, namespace) = match (policy.mode, confinement) {
            (Mode::WorkspaceWrite, Confinement::Namespace(kind)) => {
                let protection = protect::find(policy)?;
                let mounts = protection.mounts(&policy.workspace)?;
                // Nothing to cover: the namespace would cost a few hundred
                // microseconds for nothing.
                let plan = if mounts.pins.is_empty() && mounts.read_only.is_empty() {
                    None
                } else {
                    Some(ns::Plan::new(kind, &mounts)?)
                };
                (protection.links(), plan)
            }
            (Mode::WorkspaceWrite, _) => (protect::find(policy)?.paths(), None),
            // Read-only: nothing in the workspace is writable, nothing to
            // protect, no namespace to pay for.
            _ => (Vec::new(), None),
        };
        let ruleset = landlock_rules::build(policy, &kept)?;
        let filter = seccomp::build(policy.network).map_err(SandboxError::Seccomp)?;
        Ok(Prepared {
            temp: Some(policy.temp.clone()),
            confinement: Some(if namespace.is_some() {
                confinement
            } else {
                Confinement::LandlockOnly
            }),
            armed: Some(hook::Armed::new(ruleset, filter, namespace)),
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Prepared, SandboxError};
    use crate::policy::Policy;

    pub(super) fn prepare(_policy: &Policy) -> Result<Prepared, SandboxError> {
        Err(SandboxError::Unsupported(crate::LINUX_ONLY.to_owned()))
    }
}
