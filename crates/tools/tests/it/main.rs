//! The integration tests of `axon-tools`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod apply_patch;
mod background;
mod behaviour;
mod boundary;
mod buffers;
mod common;
mod hardening;
mod images;
mod multi_edit;
mod pdf;
mod pdf_fixture;
mod placeholders;
mod preview;
mod race;
mod sandboxed_shell;
mod seed000_vault_tools;
mod seed001_seed002_tools;
