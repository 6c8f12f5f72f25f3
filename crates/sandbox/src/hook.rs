//! The part of the sandbox that runs in the child, between fork and exec.
//!
//! Guarantees: [`Armed::enter`] allocates nothing, takes no lock and makes
//! only raw system calls (prctl, landlock_restrict_self, seccomp), so it is
//! sound after `fork` in a multi-threaded parent; it either confines the
//! child completely (no_new_privs, then Landlock, then seccomp) or makes
//! the spawn fail with the failing step's OS error. It never lets the
//! command run with only part of the sandbox.
//!
//! Checked against the sources: landlock 0.4.8's `restrict_self` on a built
//! ruleset calls prctl and landlock_restrict_self and returns plain values
//! (its errors hold `io::Error::last_os_error()`, which does not allocate);
//! seccompiler 0.5.0's `apply_filter` calls prctl and seccomp with a
//! pointer to the already-built program.

use std::io;

use landlock::{RestrictSelfError, RulesetCreated, RulesetError, RulesetStatus};
use seccompiler::BpfProgram;

/// A ruleset and a filter ready to enforce.
#[derive(Debug)]
pub(crate) struct Armed {
    /// `Option` so the child can consume it; the child's copy of the hook
    /// is its own (fork copies memory), so the parent keeps `Some` and a
    /// second spawn of the same command is confined too.
    ruleset: Option<RulesetCreated>,
    filter: BpfProgram,
}

impl Armed {
    pub(crate) fn new(ruleset: RulesetCreated, filter: BpfProgram) -> Armed {
        Armed { ruleset: Some(ruleset), filter }
    }

    /// Confines the calling process. Called in the child only.
    #[allow(unsafe_code)]
    pub(crate) fn enter(&mut self) -> io::Result<()> {
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
            Ok(()) => Ok(()),
            Err(seccompiler::Error::Prctl(error) | seccompiler::Error::Seccomp(error)) => {
                Err(error)
            }
            Err(_) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }
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
