//! Keeping the history a provider sees within its window.
//!
//! For now this is the forced trim a context-length error calls for; token
//! counting and the 80 % rule come with the context manager.

use axon_protocol::{Message, Role};

/// Drops the oldest half of `history` (counted in messages), returning how
/// many messages went. A message and the tool results that follow it go
/// together, so every tool call keeps exactly its results; system messages
/// and the latest user message always stay; and what is left starts with a
/// user message, as every API requires.
pub fn trim_half(history: &mut Vec<Message>) -> usize {
    let units = units(history);
    let Some(latest_user) = units.iter().rposition(|u| history[u.0].role == Role::User) else {
        return 0;
    };
    let target = history.len().div_ceil(2);
    let mut dropped = vec![false; units.len()];
    let mut count = 0;
    let mut past_latest_user = false;
    for (i, &(start, end)) in units.iter().enumerate() {
        let role = history[start].role;
        // Stop once half is gone, but only where the kept part starts with
        // a user message.
        if count >= target && (past_latest_user || role == Role::User) {
            break;
        }
        if i == latest_user {
            past_latest_user = true;
        } else if role != Role::System {
            dropped[i] = true;
            count += end - start;
        }
    }
    if count == 0 {
        return 0;
    }
    let mut kept = Vec::with_capacity(history.len() - count);
    for (i, &(start, end)) in units.iter().enumerate() {
        if !dropped[i] {
            kept.extend_from_slice(&history[start..end]);
        }
    }
    *history = kept;
    count
}

/// Half-open ranges of messages that belong together: a message and the
/// tool results after it.
fn units(history: &[Message]) -> Vec<(usize, usize)> {
    let mut units: Vec<(usize, usize)> = Vec::new();
    for (i, message) in history.iter().enumerate() {
        match units.last_mut() {
            Some(unit) if message.role == Role::Tool => unit.1 = i + 1,
            _ => units.push((i, i + 1)),
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::{ToolCall, ToolOutput};

    fn call_turn(id: &str) -> Vec<Message> {
        let mut assistant = Message::assistant("");
        assistant.tool_calls =
            vec![ToolCall { id: id.into(), name: "glob".into(), arguments: serde_json::json!({}) }];
        vec![assistant, Message::tool_result(id, ToolOutput::text("x"))]
    }

    #[test]
    fn trimming_keeps_groups_whole_and_starts_with_a_user_message() {
        let mut history = vec![Message::user("first"), Message::assistant("ok")];
        history.push(Message::user("second"));
        for id in ["a", "b", "c", "d"] {
            history.extend(call_turn(id));
        }
        let before = history.len();
        let dropped = trim_half(&mut history);
        assert!(dropped * 2 >= before, "dropped {dropped} of {before}");
        assert_eq!(history[0].text(), "second");
        for (i, m) in history.iter().enumerate() {
            if m.role == Role::Tool {
                let call_id = m.tool_call_id.as_deref().unwrap();
                let owner = history[..i].iter().rev().find(|m| m.role == Role::Assistant).unwrap();
                assert!(owner.tool_calls.iter().any(|c| c.id == call_id));
            }
        }
    }

    #[test]
    fn a_lone_user_message_cannot_be_trimmed() {
        let mut history = vec![Message::user("only")];
        assert_eq!(trim_half(&mut history), 0);
        assert_eq!(history.len(), 1);
    }
}
