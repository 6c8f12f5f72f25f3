//! axon's sessions, one append-only JSONL file each.
//!
//! A session file is a header line (schema version, id, title, workspace,
//! model, creation time) followed by one [`Record`] per line, each written
//! to the operating system in one call as the run goes, so a crash or
//! `kill -9` of axon at any moment loses at most the line being written.
//! The header and the file's folder entry are synced to disk when the file
//! is created; records reach the disk when the writer's owner calls
//! [`SessionWriter::sync`], at each turn's end, so a power loss or an
//! operating-system crash can lose the records written since the last turn
//! ended. Loading ([`load`]) reads every line it can: a torn last
//! line is dropped with a warning, an unreadable line in the middle is
//! skipped with a warning naming it, and only a file without a readable
//! header fails, with a message naming the file and the line.
//!
//! Invariants:
//! - A file is only ever appended to; nothing rewrites it, so a crash cannot
//!   lose what was already written.
//! - Every line goes through the [`Redactor`] first, the header's title (the
//!   first prompt) included, masked before it is cut to length: API keys and
//!   authorization values never reach a session file. Titles are masked
//!   again when listed or loaded, for files written before that.
//! - Images are kept beside the file, one per hash, and the lines name
//!   them (`images.rs`); loading puts them back, or says which is missing.
//! - The history the agent resumes with is the recorded messages with each
//!   recorded compaction applied ([`Session::history`]); the file keeps every
//!   original message.

mod atif;
mod export;
pub mod foreign;
mod images;
mod load;
mod record;
mod redact;
mod rewind;
mod store;

pub use atif::{
    ATIF_VERSION, AgentInfo, AtifError, AtifExport, FinalMetrics, Observation, ObservationResult,
    Step, StepMetrics, StepSource, StepToolCall, Trajectory, atif_json, to_atif,
};
pub use export::{to_json, to_markdown};
pub use load::{LoadError, load};
pub use record::{Header, Record, SESSION_VERSION};
pub use redact::Redactor;
pub use rewind::{Rewind, TurnSummary};
pub use store::{
    Session, SessionStore, SessionSummary, SessionWriter, StoreError, new_session_id, private_dir,
};
