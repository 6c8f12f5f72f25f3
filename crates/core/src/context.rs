//! Keeping the history a provider sees within its window.
//!
//! For now this is the forced trim a context-length error calls for; token
//! counting and the 80 % rule come with the context manager.

use axon_protocol::{Message, Role, ToolOutput};

/// Drops the oldest half of `history` (counted in messages) and returns how
/// many messages went and where the message at `keep` (the request being
/// worked on) now is. A message and the tool results that follow it go
/// together, so every tool call keeps exactly its results; system messages
/// and the message at `keep` always stay; and what is left starts with a
/// user message, as every API requires.
pub fn trim_half(history: &mut Vec<Message>, keep: usize) -> (usize, usize) {
    let units = units(history);
    let Some(kept_unit) = units.iter().position(|&(start, end)| (start..end).contains(&keep))
    else {
        return (0, keep);
    };
    let target = history.len().div_ceil(2);
    let mut dropped = vec![false; units.len()];
    let mut count = 0;
    let mut past_kept = false;
    for (i, &(start, end)) in units.iter().enumerate() {
        let role = history[start].role;
        // Stop once half is gone, but only where the kept part starts with
        // a user message.
        if count >= target && (past_kept || role == Role::User) {
            break;
        }
        if i == kept_unit {
            past_kept = true;
        } else if role != Role::System {
            dropped[i] = true;
            count += end - start;
        }
    }
    if count == 0 {
        return (0, keep);
    }
    let dropped_before: usize =
        units[..kept_unit].iter().zip(&dropped).filter(|(_, d)| **d).map(|(u, _)| u.1 - u.0).sum();
    let mut kept = Vec::with_capacity(history.len() - count);
    for (i, &(start, end)) in units.iter().enumerate() {
        if !dropped[i] {
            kept.extend_from_slice(&history[start..end]);
        }
    }
    *history = kept;
    (count, keep - dropped_before)
}

/// Gives every tool call without a result an "interrupted" error result, so
/// a history cut short (a run dropped mid-tool, a session saved mid-turn) is
/// valid to send again.
pub fn close_open_calls(history: &mut Vec<Message>) {
    let mut fixed = Vec::with_capacity(history.len());
    let mut open: Vec<String> = Vec::new();
    for message in history.drain(..) {
        if message.role != Role::Tool {
            fixed.extend(open.drain(..).map(interrupted));
        }
        match message.role {
            Role::Tool => {
                if let Some(id) = &message.tool_call_id {
                    open.retain(|pending| pending != id);
                }
            }
            Role::Assistant => open = message.tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => {}
        }
        fixed.push(message);
    }
    fixed.extend(open.into_iter().map(interrupted));
    *history = fixed;
}

fn interrupted(call_id: String) -> Message {
    Message::tool_result(call_id, ToolOutput::error("Interrupted before it finished."))
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
        let (dropped, prompt) = trim_half(&mut history, 2);
        assert!(dropped * 2 >= before, "dropped {dropped} of {before}");
        assert_eq!(history[0].text(), "second");
        assert_eq!(prompt, 0);
        for (i, m) in history.iter().enumerate() {
            if m.role == Role::Tool {
                let call_id = m.tool_call_id.as_deref().unwrap();
                let owner = history[..i].iter().rev().find(|m| m.role == Role::Assistant).unwrap();
                assert!(owner.tool_calls.iter().any(|c| c.id == call_id));
            }
        }
    }

    #[test]
    fn the_task_survives_trimming_in_text_protocol_mode() {
        // Text-protocol results are user messages; the task must still stay.
        let mut history = vec![Message::user("the task")];
        for n in 0..3 {
            history.push(Message::assistant(format!("call {n}")));
            history.push(Message::user(format!("results {n}")));
        }
        let (_, prompt) = trim_half(&mut history, 0);
        assert_eq!(prompt, 0);
        assert_eq!(history[0].text(), "the task");
        assert_eq!(history.last().unwrap().text(), "results 2");
    }

    #[test]
    fn open_calls_are_closed_where_they_belong() {
        let mut history = vec![Message::user("u")];
        history.extend(call_turn("a"));
        history.pop();
        history.push(Message::user("next"));
        history.extend(call_turn("b"));
        history.pop();
        close_open_calls(&mut history);
        let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::User, Role::Assistant, Role::Tool]
        );
        assert_eq!(history[2].tool_call_id.as_deref(), Some("a"));
        assert!(history[5].is_error);
    }

    #[test]
    fn a_lone_user_message_cannot_be_trimmed() {
        let mut history = vec![Message::user("only")];
        assert_eq!(trim_half(&mut history, 0), (0, 0));
        assert_eq!(history.len(), 1);
    }
}
