//! The integration tests of `nova`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod support {
    pub mod postgres;
}
mod end_to_end;
mod generated_client;
mod http_client;
mod postgres;
mod properties;
