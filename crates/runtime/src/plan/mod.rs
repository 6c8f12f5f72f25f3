//! Plan mode as the session runs it.
//!
//! - `plan_mode.rs`: the policy, once for every front end: a proposal by
//!   the planner (read-only tools), approval, the steps run in order, and
//!   revisions after a failed step (at most `MAX_REVISIONS`).
//! - `plan_text.rs`: a plan as text a person edits (`description ::
//!   expected outcome` per pending step) and back; public as
//!   `axon_runtime::plan_text`.
//!
//! Elsewhere: the plan's types and events are the protocol's (`plan.rs` in
//! `axon-protocol`); the planner, step execution and revision requests are
//! core's (`axon_core::plan`, `plan.rs`); opening the text in `$EDITOR` is
//! the CLI's (`plan_edit.rs`).

mod plan_mode;
pub mod plan_text;
