//! Keeping the history a provider sees within its window.
//!
//! Two trims, both on whole units (a message and the tool results after it,
//! so a call never loses its results): [`trim_to_budget`] before every model
//! call, dropping the oldest units until the estimate is under 80 % of the
//! window; and [`trim_half`], the forced trim a context-length error calls
//! for. Neither touches system messages or the request being worked on, and
//! what is left starts with a user message, as every API requires. The
//! session file keeps every message; only what is sent shrinks.

use axon_protocol::{Message, Role, ToolOutput};

/// The share of the window a request may fill before trimming starts.
pub const TRIM_AT: f64 = 0.8;

/// What a conversation says when trimming left nothing of it (seed 001).
pub const CLEARED_NOTICE: &str = "The earlier conversation was cleared to fit the model's context \
    window. Please describe what you need again.";

/// The share of the window from which tokens are counted with the model's
/// tokenizer instead of estimated: half of [`TRIM_AT`]. Below it no trim can
/// be due even if the estimate is half the real count (it stays within
/// 0.79× of it on every kind of text measured), so short conversations never
/// load a vocabulary, and every trim is decided on exact counts.
pub const EXACT_AT: f64 = TRIM_AT / 2.0;

/// How much of the window a request may use before it is trimmed.
pub fn budget(context_window: u64) -> u64 {
    (context_window as f64 * TRIM_AT) as u64
}

/// The (corrected) tokens past which the history is counted exactly.
pub fn exact_from(context_window: u64) -> u64 {
    (context_window as f64 * EXACT_AT) as u64
}

/// Drops the oldest units of `history` (token costs in `tokens`, one per
/// message) until `fixed` plus what remains is at most `budget`. System
/// messages and the unit holding `keep` stay, and so does everything after
/// it. Returns how many messages went and where `keep` now is.
pub fn trim_to_budget(
    history: &mut Vec<Message>,
    tokens: &mut Vec<u64>,
    fixed: u64,
    budget: u64,
    keep: usize,
) -> (usize, usize) {
    let mut total = fixed + tokens.iter().sum::<u64>();
    if total <= budget || history.len() != tokens.len() {
        return (0, keep);
    }
    let units = units(history);
    let kept_unit =
        units.iter().position(|&(start, end)| (start..end).contains(&keep)).unwrap_or(units.len());
    let mut dropped = vec![false; units.len()];
    for (i, &(start, end)) in units.iter().enumerate().take(kept_unit) {
        let role = history[start].role;
        // Under budget, stop where the kept part starts with a user message.
        if total <= budget && role == Role::User {
            break;
        }
        if role != Role::System {
            dropped[i] = true;
            total -= tokens[start..end].iter().sum::<u64>();
        }
    }
    remove_units(history, tokens, &units, &dropped, keep)
}

/// Seed 001's `trimMessages`: `messages` (the system message first, if any)
/// trimmed to at most [`TRIM_AT`] of `max_tokens`, the oldest non-system
/// messages going first and the latest user message always kept. When
/// nothing but the system message would remain, [`CLEARED_NOTICE`] is added.
pub fn trim_messages(messages: &[Message], tokens: &[u64], max_tokens: u64) -> Vec<Message> {
    let mut history = messages.to_vec();
    let mut costs = tokens.to_vec();
    let keep = history.iter().rposition(|m| m.role == Role::User).unwrap_or(history.len());
    trim_to_budget(&mut history, &mut costs, 0, budget(max_tokens), keep);
    if history.iter().all(|m| m.role == Role::System) {
        history.push(Message::user(CLEARED_NOTICE));
    }
    history
}

fn remove_units(
    history: &mut Vec<Message>,
    tokens: &mut Vec<u64>,
    units: &[(usize, usize)],
    dropped: &[bool],
    keep: usize,
) -> (usize, usize) {
    let count: usize = units.iter().zip(dropped).filter(|(_, d)| **d).map(|(u, _)| u.1 - u.0).sum();
    if count == 0 {
        return (0, keep);
    }
    let dropped_before: usize =
        units.iter().zip(dropped).filter(|(u, d)| **d && u.1 <= keep).map(|(u, _)| u.1 - u.0).sum();
    let mut kept = Vec::with_capacity(history.len() - count);
    let mut kept_tokens = Vec::with_capacity(history.len() - count);
    for (i, &(start, end)) in units.iter().enumerate() {
        if !dropped[i] {
            kept.extend_from_slice(&history[start..end]);
            kept_tokens.extend_from_slice(&tokens[start..end]);
        }
    }
    *history = kept;
    *tokens = kept_tokens;
    (count, keep.saturating_sub(dropped_before))
}

/// Drops the oldest half of `history` (counted in messages) and returns how
/// many messages went and where the message at `keep` (the request being
/// worked on) now is. A message and the tool results that follow it go
/// together, so every tool call keeps exactly its results; system messages
/// and the message at `keep` always stay; and what is left starts with a
/// user message, as every API requires.
pub fn trim_half(history: &mut Vec<Message>, tokens: &mut Vec<u64>, keep: usize) -> (usize, usize) {
    let units = units(history);
    if history.len() != tokens.len()
        || !units.iter().any(|&(start, end)| (start..end).contains(&keep))
    {
        return (0, keep);
    }
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
        if (start..end).contains(&keep) {
            past_kept = true;
        } else if role != Role::System {
            dropped[i] = true;
            count += end - start;
        }
    }
    remove_units(history, tokens, &units, &dropped, keep)
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
        let mut tokens = vec![1; history.len()];
        let (dropped, prompt) = trim_half(&mut history, &mut tokens, 2);
        assert_eq!(tokens.len(), history.len());
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
        let mut tokens = vec![1; history.len()];
        let (_, prompt) = trim_half(&mut history, &mut tokens, 0);
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
        let mut tokens = vec![1; history.len()];
        assert_eq!(trim_half(&mut history, &mut tokens, 0), (0, 0));
        assert_eq!(history.len(), 1);
    }
}
