//! Claude Code's project transcripts: one JSON record a line, `type` of
//! `user`, `assistant`, `summary` or `system`, the message in `message`
//! with Anthropic's content blocks (`text`, `thinking`, `tool_use`,
//! `tool_result`), `cwd` and `sessionId` on each. Records of a subagent
//! (`isSidechain`) and Claude Code's own notes to the model (`isMeta`) are
//! left out and counted; a compaction's `summary` is kept as text.

use std::path::PathBuf;

use axon_protocol::ContentPart;
use serde_json::Value;

use super::{Builder, Imported, result_text};

pub fn read(text: &str) -> Imported {
    let mut imported = Imported::default();
    let mut b = Builder::default();
    let (mut sidechain, mut meta) = (0usize, 0usize);
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            b.unknown(&format!("line {} is not JSON", n + 1), line);
            continue;
        };
        let field = |name: &str| record.get(name).and_then(Value::as_str);
        if imported.id.is_none() {
            imported.id = field("sessionId").map(str::to_string);
        }
        if let Some(cwd) = field("cwd") {
            imported.workspace = Some(PathBuf::from(cwd));
        }
        if record.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            sidechain += 1;
            continue;
        }
        match field("type") {
            Some("user") if record.get("isMeta").and_then(Value::as_bool) == Some(true) => {
                meta += 1;
            }
            Some("user") => user(&mut b, record.get("message")),
            Some("assistant") => {
                let message = record.get("message");
                if let Some(model) = message.and_then(|m| m.get("model")).and_then(Value::as_str)
                    && model != "<synthetic>"
                {
                    imported.model = Some(model.to_string());
                }
                assistant(&mut b, message);
            }
            Some("summary") => {
                if let Some(summary) = field("summary") {
                    b.user_text(&format!("[Claude Code's summary of the conversation]\n{summary}"));
                }
            }
            // Claude Code's own status lines (hooks, compaction boundaries):
            // nothing the model said or was told.
            Some("system") | Some("file-history-snapshot") => {}
            Some(other) => b.unknown(&format!("a Claude Code record of type `{other}`"), line),
            None => b.unknown("a record without a type", line),
        }
    }
    if sidechain > 0 {
        b.note(format!("left out {sidechain} records of Claude Code's subagents (sidechains)"));
    }
    if meta > 0 {
        b.note(format!("left out {meta} notes Claude Code added for its model (isMeta)"));
    }
    (imported.messages, imported.notes) = b.finish();
    imported
}

fn user(b: &mut Builder, message: Option<&Value>) {
    let Some(content) = message.and_then(|m| m.get("content")) else { return };
    match content {
        Value::String(text) => b.user_text(text),
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        b.user_text(block.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("tool_result") => {
                        let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                        let text = result_text(block.get("content").unwrap_or(&Value::Null));
                        let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
                        b.result(id, text, is_error);
                    }
                    Some("image") => b.note("an image the user attached (not imported)".into()),
                    _ => b.unknown("a user content block of an unknown kind", &block.to_string()),
                }
            }
        }
        other => b.unknown("user content of an unknown shape", &other.to_string()),
    }
}

fn assistant(b: &mut Builder, message: Option<&Value>) {
    let Some(Value::Array(blocks)) = message.and_then(|m| m.get("content")) else { return };
    for block in blocks {
        let text = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        match block.get("type").and_then(Value::as_str) {
            Some("text") => b.assistant_part(ContentPart::text(text("text"))),
            Some("thinking") => {
                b.assistant_part(ContentPart::Thinking { text: text("thinking"), signature: None });
            }
            Some("redacted_thinking") => {}
            Some("tool_use") | Some("server_tool_use") => {
                let input =
                    block.get("input").cloned().unwrap_or(Value::Object(Default::default()));
                b.call(text("id"), text("name"), input);
            }
            _ => b.unknown("an assistant content block of an unknown kind", &block.to_string()),
        }
    }
}
