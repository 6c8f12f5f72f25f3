//! Sessions of other agents, read into axon's messages: Claude Code's
//! project transcripts (`~/.claude/projects/<dir>/<id>.jsonl`) and Codex's
//! rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Guarantees:
//! - Reading never fails on content: a line that is not JSON, a record of a
//!   type this reader does not know, or a block it cannot map is kept as
//!   text where it stood (in a user message, marked) and counted in
//!   [`Imported::notes`], so nothing the user had is silently lost.
//! - Every tool call gets exactly one result, as axon's history requires: a
//!   call whose result is missing gets one saying so.
//! - Tool names and arguments are kept as the other agent wrote them; the
//!   model continuing the session sees what was done, in that agent's words.
//! - Thinking is kept as text without its signature (a signature is only
//!   valid for the session that made it).

mod claude;
mod codex;

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
/// agent split (Claude writes one record per content block) and closing
/// calls left without a result.
#[derive(Default)]
pub(crate) struct Builder {
    messages: Vec<Message>,
    notes: Vec<String>,
}

impl Builder {
    /// Text the user (or the other agent, for the user) said.
    pub(crate) fn user_text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.close_open_calls();
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => {
                last.content.push(ContentPart::text(text.to_string()));
            }
            _ => self.messages.push(Message::user(text.to_string())),
        }
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

    /// The result of call `id`. A result for a call not seen is kept as
    /// text, since a history may not hold a result without its call.
    pub(crate) fn result(&mut self, id: &str, text: String, is_error: bool) {
        let known = self.messages.iter().any(|m| m.tool_calls.iter().any(|c| c.id == id));
        let answered = self
            .messages
            .iter()
            .any(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id));
        if !known || answered {
            self.note(format!("a tool result for a call it does not have ({id})"));
            return self.user_text(&format!("[tool result {id}]\n{text}"));
        }
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

    pub(crate) fn finish(mut self) -> (Vec<Message>, Vec<String>) {
        self.close_open_calls();
        (self.messages, self.notes)
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

    /// Gives every call without a result one, before the user speaks again.
    fn close_open_calls(&mut self) {
        let open: Vec<String> = self
            .messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .filter(|c| {
                !self
                    .messages
                    .iter()
                    .any(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(&c.id))
            })
            .map(|c| c.id.clone())
            .collect();
        for id in open {
            let mut output =
                ToolOutput::text("(the other agent's transcript has no result for this call)");
            output.is_error = true;
            self.messages.push(Message::tool_result(id, output));
        }
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
