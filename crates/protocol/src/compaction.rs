//! How a compaction summary takes the place of the turns it summarises.
//! Shared by the agent (which compacts) and the session store (which
//! rebuilds a compacted history on resume), so both agree to the byte.

use crate::message::{ContentPart, Message, Role};

const SUMMARY_OPEN: &str = "[Summary of the earlier conversation, written when it was compacted]\n";
const SUMMARY_CLOSE: &str = "\n[End of summary]";
const CARRIED_OPEN: &str = "\n\n[Carried forward verbatim from before the compaction]\n";
const CARRIED_CLOSE: &str = "\n[End of carried state]";

/// Leads the first user message of `history` with `summary` (dropping any
/// non-user messages before it), or adds the summary as a user message when
/// none is left: a history must start with a user message. `carried` is the
/// state carried forward verbatim (the open checklist, the files changed,
/// the user's latest request when it was replaced); it follows the summary
/// in a block of its own, so no summary can paraphrase it away.
pub fn apply_summary(history: &mut Vec<Message>, summary: &str, carried: Option<&str>) {
    let mut lead = format!("{SUMMARY_OPEN}{summary}{SUMMARY_CLOSE}");
    if let Some(carried) = carried {
        lead.push_str(&format!("{CARRIED_OPEN}{carried}{CARRIED_CLOSE}"));
    }
    let first_user = history.iter().position(|m| m.role == Role::User).unwrap_or(history.len());
    history.drain(..first_user);
    match history.first_mut() {
        Some(first) => first.content.insert(0, ContentPart::text(format!("{lead}\n\n"))),
        None => history.push(Message::user(lead)),
    }
}

/// What [`apply_summary`] put before `message`'s own words, taken apart:
/// the carried block (when there was one) and the message's own text. A
/// message no compaction led is all its own text. The next compaction
/// carries the block on, and a plan step's request is known again by its
/// own words.
pub fn split_lead(message: &Message) -> (Option<String>, String) {
    let lead = message
        .content
        .first()
        .and_then(ContentPart::as_text)
        .filter(|text| message.role == Role::User && text.starts_with(SUMMARY_OPEN));
    let Some(lead) = lead else { return (None, message.text()) };
    let own: String = message.content[1..].iter().filter_map(ContentPart::as_text).collect();
    // The summary is the model's words (it may quote an earlier lead): the
    // block is the one after the last summary's end.
    let marker = format!("{SUMMARY_CLOSE}{CARRIED_OPEN}");
    let carried = lead.rfind(&marker).and_then(|at| {
        let block = &lead[at + marker.len()..];
        block.rfind(CARRIED_CLOSE).map(|end| block[..end].to_string())
    });
    (carried, own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lead_comes_apart_into_the_carried_block_and_the_own_words() {
        let mut history = vec![Message::user("step 2 please"), Message::assistant("ok")];
        apply_summary(&mut history, "We did step 1.", Some("Files changed so far:\n- a.rs: x"));
        assert_eq!(
            split_lead(&history[0]),
            (Some("Files changed so far:\n- a.rs: x".to_string()), "step 2 please".to_string())
        );
        assert_eq!(split_lead(&history[1]), (None, "ok".to_string()));
        let mut alone = Vec::new();
        apply_summary(&mut alone, "Nothing left.", None);
        assert_eq!(split_lead(&alone[0]), (None, String::new()));
    }
}
