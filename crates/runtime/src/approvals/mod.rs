//! The session's side of approvals: what may run without asking, and how
//! the front end is asked about the rest.
//!
//! - `permissions.rs`: [`SessionPermissions`], core's `Permissions` gate
//!   over the config's rules, the trust file and the sandbox (a deny rule
//!   refuses whatever the policy; an ask rule or a sandbox escape is asked
//!   about even under `--yes`), and the rules an "always" answer saves.
//! - `approver.rs`: [`AskFrontEnd`], core's `Approver`: an
//!   `approval_requested` event with a preview, answered through
//!   [`SessionControl`] (which also cancels a turn and answers forms).
//!
//! Elsewhere: the policy, the traits and the order a call is checked in
//! are core's (`axon_core`'s `approval.rs`, and `call_runner.rs` that
//! applies them); rule syntax, matching and the trust file are the
//! `axon-permissions` crate's; the approval mode a front end switches is
//! `session.rs`'s.

mod approver;
mod permissions;

pub use approver::{AskFrontEnd, SessionControl};
pub use permissions::{Commands, SessionPermissions};
