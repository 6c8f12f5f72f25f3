//! The part of the sandbox that runs in the child, between fork and exec.
//!
//! Guarantees: [`Armed::enter`] allocates nothing, takes no lock and makes
//! only raw system calls (the mount namespace's, see `ns.rs`; prctl,
//! landlock_restrict_self, seccomp, close_range), so it is sound after
//! `fork` in a multi-threaded parent; it either confines the child
//! completely (the mount namespace where there is one, no_new_privs,
//! Landlock, seccomp, and every descriptor above 2 marked close-on-exec)
//! or makes the spawn fail with the failing step's OS error. It never lets
//! the command run with only part of the sandbox.
//!
//! Checked against the sources: landlock 0.4.8's `restrict_self` on a built
//! ruleset calls prctl and landlock_restrict_self and returns plain values
//! (its errors hold `io::Error::last_os_error()`, which does not allocate);
//! seccompiler 0.5.0's `apply_filter` calls prctl and seccomp with a
//! pointer to the already-built program.

use std::io;

use landlock::{RestrictSelfError, RulesetCreated, RulesetError, RulesetStatus};
use seccompiler::BpfProgram;

use crate::ns::Plan;

/// A namespace plan, a ruleset and a filter ready to enforce.
#[derive(Debug)]
pub(crate) struct Armed {
    /// `Option` so the child can consume it; the child's copy of the hook
    /// is its own (fork copies memory), so the parent keeps `Some` and a
    /// second spawn of the same command is confined too.
    ruleset: Option<RulesetCreated>,
    filter: BpfProgram,
    namespace: Option<Plan>,
}

impl Armed {
    pub(crate) fn new(
        ruleset: RulesetCreated,
        filter: BpfProgram,
        namespace: Option<Plan>,
    ) -> Armed {
        Armed { ruleset: Some(ruleset), filter, namespace }
    }

    /// Confines the calling process. Called in the child only.
    #[allow(unsafe_code)]
    pub(crate) fn enter(&mut self) -> io::Result<()> {
        // First: Landlock and seccomp both forbid mounting afterwards.
        if let Some(plan) = &self.namespace {
            plan.enter()?;
        }
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let Some(ruleset) = self.ruleset.take() else {
            // Only reachable if the same child ran the hook twice.
            return Err(io::Error::from_raw_os_error(libc::EALREADY));
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
            // prepare checked the kernel; a ruleset that enforces nothing
            // now means Landlock went away, and the command must not run.
            Ok(_) => return Err(io::Error::from_raw_os_error(libc::ENOSYS)),
            Err(error) => return Err(landlock_os_error(error)),
        }
        match seccompiler::apply_filter(&self.filter) {
            Ok(()) => {}
            Err(seccompiler::Error::Prctl(error) | seccompiler::Error::Seccomp(error)) => {
                return Err(error);
            }
            Err(_) => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
        close_inherited()
    }
}

/// Marks every descriptor above 2 close-on-exec, so the command inherits
/// only stdin, stdout and stderr: a descriptor axon was started with (or
/// one another thread opened without `O_CLOEXEC` while this child forked)
/// could name a file outside the sandbox, and writing through it needs no
/// path. Marked rather than closed because the standard library reports a
/// failed exec through a close-on-exec pipe of its own, which must stay
/// open until the exec. `CLOSE_RANGE_CLOEXEC` exists since Linux 5.11;
/// the sandbox needs 6.2 (Landlock ABI 3).
#[allow(unsafe_code)]
fn close_inherited() -> io::Result<()> {
    // SAFETY: close_range with integer arguments only.
    let rc =
        unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The OS error inside a failed `restrict_self`, moved out without
/// allocating.
fn landlock_os_error(error: RulesetError) -> io::Error {
    match error {
        RulesetError::RestrictSelf(
            RestrictSelfError::SetNoNewPrivsCall { source, .. }
            | RestrictSelfError::RestrictSelfCall { source, .. },
        ) => source,
        _ => io::Error::from_raw_os_error(libc::EINVAL),
    }
}
