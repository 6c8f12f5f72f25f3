//! The lines of a session file.

use axon_protocol::{Message, Plan, Usage};
use serde::{Deserialize, Serialize};

/// The schema version this build writes. Older versions are migrated on
/// load (see `load::migrate`); newer ones are refused with a message.
pub const SESSION_VERSION: u32 = 1;

/// The first line of every session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub version: u32,
    pub id: String,
    pub title: String,
    /// The workspace folder the session ran in.
    pub workspace: String,
    pub provider: String,
    pub model: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// Every line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A message, as it joined the history, with its token count when the
    /// writer knew it (a resume then need not count again).
    Message {
        message: Message,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// Tokens a model call used, as the provider reported them.
    Usage { usage: Usage },
    /// The session went on with another provider or model.
    Model { provider: String, model: String, at: i64 },
    /// Everything but the newest `kept` messages of the history (as it
    /// stood, with earlier compactions applied) was replaced by `summary`.
    /// Counted from the end, so messages a run dropped from memory (trims)
    /// cannot shift it. The messages themselves stay in the file above.
    /// `carried` is the state carried forward verbatim beside the summary
    /// (absent in files written before axon carried any).
    Compaction {
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carried: Option<String>,
        kept: usize,
        at: i64,
    },
    /// The plan as it stood after a change (proposed, approved, a step
    /// started or ended, revised); the last one is current.
    Plan { plan: Plan },
    /// The request before it got no answer: the run failed with `reason`.
    /// A resume asking the same again answers it instead of repeating it.
    TurnFailed { reason: String, at: i64 },
    /// The newest `messages` messages were taken back (a refused request
    /// and its reply): a resumed session goes on without them.
    Withdrawn { messages: usize, at: i64 },
    /// User request number `turn` of the session (counted over the whole
    /// file, across resumes) begins: what follows is its conversation.
    Turn { turn: u32, at: i64 },
    /// Before turn `turn` first changed a file, the workspace's files were
    /// snapshotted as `snapshot` (a checkpoint id); `skipped` names what
    /// the snapshot left out (ignored, too large).
    Checkpoint {
        turn: u32,
        snapshot: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        at: i64,
    },
    /// Turn `turn` ran a tool that may change files without a checkpoint
    /// before it, for `reason` (git missing, a snapshot that failed): a
    /// rewind cannot undo what it changed, and says so.
    CheckpointMissed { turn: u32, reason: String, at: i64 },
    /// Turn `turn`, which took a checkpoint, ended with the files
    /// snapshotted as `snapshot`: with the checkpoint before it, exactly
    /// what the turn changed (a rewind leaves the rest alone). `changed`
    /// counts the paths that differ from the checkpoint (0: the turn's
    /// writes were all refused or changed nothing); `None` in files of an
    /// older axon.
    TurnChanged {
        turn: u32,
        snapshot: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        changed: Option<usize>,
        at: i64,
    },
}

impl Record {
    /// A message record without a token count.
    pub fn message(message: Message) -> Self {
        Record::Message { message, tokens: None }
    }
}

/// The header line as written: `{"type":"session", …}`.
#[derive(Serialize, Deserialize)]
pub(crate) struct HeaderLine {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub header: Header,
}

pub(crate) const HEADER_TYPE: &str = "session";
