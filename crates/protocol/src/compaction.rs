//! How a compaction summary takes the place of the turns it summarises.
//! Shared by the agent (which compacts) and the session store (which
//! rebuilds a compacted history on resume), so both agree to the byte.

use crate::message::{ContentPart, Message, Role};

/// Leads the first user message of `history` with `summary` (dropping any
/// non-user messages before it), or adds the summary as a user message when
/// none is left: a history must start with a user message. `carried` is the
/// state carried forward verbatim (the open checklist, the files changed,
/// the user's latest request when it was replaced); it follows the summary
/// in a block of its own, so no summary can paraphrase it away.
pub fn apply_summary(history: &mut Vec<Message>, summary: &str, carried: Option<&str>) {
    let mut lead = format!(
        "[Summary of the earlier conversation, written when it was compacted]\n{summary}\n[End of summary]"
    );
    if let Some(carried) = carried {
        lead.push_str(&format!(
            "\n\n[Carried forward verbatim from before the compaction]\n{carried}\n[End of carried state]"
        ));
    }
    let first_user = history.iter().position(|m| m.role == Role::User).unwrap_or(history.len());
    history.drain(..first_user);
    match history.first_mut() {
        Some(first) => first.content.insert(0, ContentPart::text(format!("{lead}\n\n"))),
        None => history.push(Message::user(lead)),
    }
}
