//! The integration tests of `axon-local`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod smollm2;
#[cfg(feature = "cpu-variants")]
mod variants;
