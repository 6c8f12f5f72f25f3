//! The integration tests of `axon-llm`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod seed000_text_protocol;
mod tool_images;
mod tool_text_openai;
mod tool_text_split;
