//! The integration tests of `axon-permissions`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod analyze;
mod common;
mod evasion;
mod props;
mod secret_files;
mod suggest;
mod tricky;
mod trust;
