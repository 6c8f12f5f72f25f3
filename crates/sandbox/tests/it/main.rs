//! The integration tests of `axon-sandbox`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

// First, and with `macro_use`: `require_landlock!` for the modules below.
#[macro_use]
mod common;

mod attacks;
mod escapes;
mod modes;
mod repository;
mod skips;
mod works;
