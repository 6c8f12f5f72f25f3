//! axon's permission rules: allow, ask and deny rules over tool calls that
//! remember what the user approved, and each workspace's trust file.
//!
//! Guarantees: pure logic (the trust file is the only I/O, under the user's
//! data folder, never in the repository); nothing prints; no input can make
//! it panic. Shell commands are judged by a quote-aware scanner feeding
//! shlex, never by regular expressions, and conservatively: what it cannot
//! pin down is `opaque` and is never auto-allowed by a prefix or exact rule;
//! a command whose words may not show all it runs (a program named by an
//! expansion, a shell reading standard input, ...) is asked about whenever
//! a deny or ask rule for `shell` exists. Deny beats ask beats allow. See
//! `command`, `effective`, `invoke`, `decide`, `suggest`, `trust`,
//! `secret_files` (the built-in ask rules for files that hold secrets).

pub mod command;
mod decide;
mod domain;
mod effective;
mod invoke;
mod patch;
mod path;
mod rule;
mod secret_files;
mod suggest;
mod trust;

pub use command::{Analysis, analyze};
pub use decide::{Kind, RuleSet, Source, Verdict};
pub use rule::{Rule, RuleError};
pub use secret_files::{SECRET_FILES, SECRET_FILES_SOURCE};
pub use suggest::{Suggestion, suggest};
pub use trust::{Trust, TrustError, trust_path};
