//! How a compaction summary takes the place of the turns it summarises.
//! Shared by the agent (which compacts) and the session store (which
//! rebuilds a compacted history on resume), so both agree to the byte.

use crate::message::{ContentPart, Message, Role};

/// Leads the first user message of `history` with `summary` (dropping any
/// non-user messages before it), or adds the summary as a user message when
/// none is left: a history must start with a user message.
pub fn apply_summary(history: &mut Vec<Message>, summary: &str) {
    let lead = format!(
        "[Summary of the earlier conversation, written when it was compacted]\n{summary}\n[End of summary]"
    );
    let first_user = history.iter().position(|m| m.role == Role::User).unwrap_or(history.len());
    history.drain(..first_user);
    match history.first_mut() {
        Some(first) => first.content.insert(0, ContentPart::text(format!("{lead}\n\n"))),
        None => history.push(Message::user(lead)),
    }
}
