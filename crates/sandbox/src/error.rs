//! Why a sandbox could not be prepared.
//!
//! Guarantees: every message says what failed (the path and the kernel's
//! reason, or the missing kernel feature) and, where there is one, what the
//! user can change; no error is ever swallowed into a weaker sandbox.

use std::path::PathBuf;

/// A sandbox `prepare` could not build. The command must then not run
/// sandboxed as asked (the caller asks the user or refuses).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel or the platform cannot enforce the mode.
    #[error("the OS sandbox cannot be enforced here: {0}")]
    Unsupported(String),
    /// The policy is inconsistent (see `Policy::validate`).
    #[error("bad sandbox settings: {0}")]
    Policy(String),
    /// A folder or file the rules need could not be opened.
    #[error("the sandbox could not open the {what} {}: {source}", path.display())]
    Path {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The Landlock rules could not be built (the kernel refused a rule).
    #[error("the sandbox's Landlock rules could not be built: {0}")]
    Landlock(String),
    /// The seccomp filter could not be compiled.
    #[error("the sandbox's seccomp filter could not be built: {0}")]
    Seccomp(String),
}
