//! Sessions of other agents, read into axon's messages: Claude Code's
//! project transcripts (`~/.claude/projects/<dir>/<id>.jsonl`) and Codex's
//! rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Guarantees:
//! - Reading never fails on content: a line that is not JSON, a record of a
//!   type this reader does not know, or a block it cannot map is kept as
//!   text where it stood (in a user message, marked) and counted in
//!   [`Imported::notes`], so nothing the user had is silently lost.
//! - The history is valid whatever order the file has (parallel calls,
//!   a result written late, after other records, or before its call): each
//!   assistant message that calls tools is followed at once by one result
//!   per call, in call order; a call without a result gets an error result
//!   saying none was recorded, and a result without a call is kept as
//!   text where it stood; both are reported in [`Imported::notes`].
//! - Tool names and arguments are kept as the other agent wrote them; the
//!   model continuing the session sees what was done, in that agent's words.
//! - Thinking is kept as text without its signature (a signature is only
//!   valid for the session that made it).

mod claude;
mod codex;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use axon_protocol::{ContentPart, Message, Role, ToolOutput};

pub use claude::read as read_claude;
pub use codex::read as read_codex;

/// Which agent a session came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Claude,
    Codex,
}

impl Source {
    /// As the session header's provider names it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Claude => "claude-code",
            Source::Codex => "codex",
        }
    }

    /// Which agent wrote `text` (a JSONL transcript), from its first
    /// records: Codex's begin with `session_meta`, Claude's carry a
    /// `sessionId`.
    pub fn detect(text: &str) -> Option<Source> {
        for line in text.lines().take(20) {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if value.get("type").and_then(|t| t.as_str()) == Some("session_meta") {
                return Some(Source::Codex);
            }
            if value.get("sessionId").is_some() {
                return Some(Source::Claude);
            }
        }
        None
    }
}

/// A session of another agent, as axon's messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// The other agent's id for it.
    pub id: Option<String>,
    /// The folder it ran in.
    pub workspace: Option<PathBuf>,
    /// The model that answered last.
    pub model: Option<String>,
    pub messages: Vec<Message>,
    /// What could not be mapped (kept as text) or was left out, one line each.
    pub notes: Vec<String>,
}

impl Imported {
    /// Reads `text` as `source` wrote it.
    pub fn read(source: Source, text: &str) -> Imported {
        match source {
            Source::Claude => read_claude(text),
            Source::Codex => read_codex(text),
        }
    }

    /// The first thing the user asked, for a title.
    pub fn title(&self) -> String {
        self.messages
            .iter()
            .find(|m| m.role == Role::User && !m.text().trim().is_empty())
            .map(|m| m.text().trim().lines().next().unwrap_or_default().to_string())
            .unwrap_or_else(|| "imported session".to_string())
    }
}

/// Builds the messages of a transcript in order, merging what the other
/// agent split (Claude writes one record per content block). Results are
/// kept where they came and put in their place by [`Builder::finish`].
#[derive(Default)]
pub(crate) struct Builder {
    messages: Vec<Message>,
    notes: Vec<String>,
}

/// What a call without a result is answered with.
pub(crate) const NO_RESULT: &str =
    "(no result was recorded for this call in the other agent's transcript)";

impl Builder {
    /// Text the user (or the other agent, for the user) said.
    pub(crate) fn user_text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        push_user(&mut self.messages, ContentPart::text(text.to_string()));
    }

    /// A part of what the user said other than text (an image).
    pub(crate) fn user_part(&mut self, part: ContentPart) {
        push_user(&mut self.messages, part);
    }

    /// A part of the assistant's reply; consecutive parts join one message
    /// until a result or the user comes between.
    pub(crate) fn assistant_part(&mut self, part: ContentPart) {
        self.assistant().content.push(part);
    }

    pub(crate) fn call(&mut self, id: String, name: String, arguments: serde_json::Value) {
        let call = axon_protocol::ToolCall { id, name, arguments };
        self.assistant().tool_calls.push(call);
    }

    /// The result of call `id`, wherever it came in the file.
    pub(crate) fn result(&mut self, id: &str, text: String, is_error: bool) {
        let mut output = ToolOutput::text(text);
        output.is_error = is_error;
        self.messages.push(Message::tool_result(id.to_string(), output));
    }

    /// Something not mapped, kept as text where it stood and noted.
    pub(crate) fn unknown(&mut self, what: &str, raw: &str) {
        self.note(what.to_string());
        let raw: String = raw.chars().take(2000).collect();
        self.user_text(&format!("[{what}, kept as it was]\n{raw}"));
    }

    pub(crate) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The messages in a valid order: each call's result right after the
    /// message that made it, in call order (the first result for its id;
    /// another is kept as text), a call without one answered with
    /// [`NO_RESULT`], and a result for no call kept as text where it stood.
    pub(crate) fn finish(mut self) -> (Vec<Message>, Vec<String>) {
        let mut slots: Vec<Option<Message>> = self.messages.into_iter().map(Some).collect();
        // Each call takes the first result with its id not yet taken.
        let mut waiting: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (at, slot) in slots.iter().enumerate() {
            if let Some(Message { role: Role::Tool, tool_call_id: Some(id), .. }) = slot {
                waiting.entry(id.clone()).or_default().push_back(at);
            }
        }
        let mut answers: HashMap<(usize, usize), usize> = HashMap::new();
        for (at, slot) in slots.iter().enumerate() {
            let calls = slot.as_ref().map(|m| m.tool_calls.as_slice()).unwrap_or_default();
            for (n, call) in calls.iter().enumerate() {
                if let Some(result) = waiting.get_mut(&call.id).and_then(VecDeque::pop_front) {
                    answers.insert((at, n), result);
                }
            }
        }
        let answering: HashSet<usize> = answers.values().copied().collect();
        let mut out: Vec<Message> = Vec::new();
        for at in 0..slots.len() {
            if answering.contains(&at) {
                continue; // placed after its call
            }
            let Some(message) = slots[at].take() else { continue };
            match message.role {
                Role::Tool => {
                    let id = message.tool_call_id.clone().unwrap_or_default();
                    self.notes.push(format!("a tool result for a call it does not have ({id})"));
                    let text = format!("[tool result {id}]\n{}", message.text());
                    push_user(&mut out, ContentPart::text(text));
                }
                Role::User => {
                    for part in message.content {
                        push_user(&mut out, part);
                    }
                }
                Role::Assistant | Role::System => {
                    let calls = message.tool_calls.clone();
                    push_assistant(&mut out, message);
                    for (n, call) in calls.iter().enumerate() {
                        let result = answers.get(&(at, n)).and_then(|&r| slots[r].take());
                        out.push(result.unwrap_or_else(|| {
                            self.notes.push(format!(
                                "a tool call without a result ({}), answered with an error \
                                 saying none was recorded",
                                call.id
                            ));
                            let mut output = ToolOutput::text(NO_RESULT);
                            output.is_error = true;
                            Message::tool_result(call.id.clone(), output)
                        }));
                    }
                }
            }
        }
        (out, self.notes)
    }

    fn assistant(&mut self) -> &mut Message {
        let continues = self.messages.last().is_some_and(|m| m.role == Role::Assistant);
        if !continues {
            self.messages.push(Message::assistant(String::new()));
            if let Some(last) = self.messages.last_mut() {
                last.content.clear();
            }
        }
        let last = self.messages.len() - 1;
        &mut self.messages[last]
    }
}

/// `part` in a user message at the end of `messages`: the last one's, if
/// it is one (two in a row would be one turn to a provider anyway).
fn push_user(messages: &mut Vec<Message>, part: ContentPart) {
    match messages.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(part),
        _ => {
            let mut message = Message::user(String::new());
            message.content = vec![part];
            messages.push(message);
        }
    }
}

/// `message` at the end of `messages`, joined to an assistant message
/// before it that made no calls (a result moved away may leave two
/// assistant messages side by side).
fn push_assistant(messages: &mut Vec<Message>, message: Message) {
    match messages.last_mut() {
        Some(last) if last.role == Role::Assistant && last.tool_calls.is_empty() => {
            last.content.extend(message.content);
            last.tool_calls = message.tool_calls;
        }
        _ => messages.push(message),
    }
}

/// The text of a tool result written as a string or as content blocks.
pub(crate) fn result_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
