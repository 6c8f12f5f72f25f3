//! A saved conversation as the user saw it, for every front end that
//! replays one (the terminal UI's `--continue`, the browser's sidebar, an
//! editor's `session/load`): the `history` event carries this, once.
//!
//! Guarantees: a user message shows what the user typed and, for each
//! file or text attached, only its name (an empty quote
//! [`axon_protocol::attachment::quote`]`(name, "")` that
//! [`axon_protocol::attachment::name_of`] reads; images stay as sent);
//! user messages axon wrote itself are left out: the text tool protocol's
//! results, and a plan step's request, of which only the plan's goal (the
//! request the user typed in plan mode) is shown, once per plan. Assistant and tool messages are
//! unchanged, so every call keeps its result.

use axon_protocol::attachment::{name_of, quote};
use axon_protocol::{ContentPart, Message, Role, TEXT_RESULTS_HEADER};

/// `messages` as the user saw them.
pub fn shown(messages: Vec<Message>) -> Vec<Message> {
    let mut goal = None;
    messages.into_iter().filter_map(|m| shown_message(m, &mut goal)).collect()
}

/// `goal`: the goal of the plan whose steps came last.
fn shown_message(mut message: Message, goal: &mut Option<String>) -> Option<Message> {
    if message.role != Role::User {
        return Some(message);
    }
    let text = message.text();
    if text.starts_with(TEXT_RESULTS_HEADER) {
        return None;
    }
    if let Some((_, asked)) = axon_core::plan::step_of_prompt(&text) {
        if goal.as_ref() == Some(&asked) {
            return None;
        }
        *goal = Some(asked.clone());
        let timestamp_ms = message.timestamp_ms;
        return Some(Message { timestamp_ms, ..Message::user(asked) });
    }
    *goal = None;
    for part in &mut message.content {
        if let ContentPart::Text { text } = part
            && let Some(name) = name_of(text)
        {
            *text = quote(&name, "");
        }
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_s_words_stay_and_axon_s_go() {
        let mut asked = Message::user("what is in a.txt?");
        asked.content.push(ContentPart::text(quote("a.txt", "secret body")));
        let step = |n: u32| {
            Message::user(format!(
                "We are carrying out an approved plan.\n\nGoal: fix it\n[x] 1. read (expected: \
                 x)\n[>] 2. write (expected: y)\n\nNow do step {n} only: write\nExpected \
                 outcome: y\n\nIf it cannot be done, answer starting with `STEP FAILED:`"
            ))
        };
        let results = Message::user(format!("{TEXT_RESULTS_HEADER}\n1. ok"));
        let answer = Message::assistant("done");
        let shown = shown(vec![asked, step(1), answer.clone(), step(2), results, answer.clone()]);
        let texts: Vec<String> = shown.iter().map(Message::text).collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
        assert_eq!(shown[0].content[0].as_text(), Some("what is in a.txt?"));
        let quoted = shown[0].content[1].as_text().unwrap_or_default();
        assert_eq!(name_of(quoted).as_deref(), Some("a.txt"));
        assert!(!quoted.contains("secret body"));
        assert_eq!(texts[1..], ["fix it", "done", "done"], "the goal once, then the answers");
    }
}
