//! Claude Code's project transcripts: one JSON record a line, `type` of
//! `user`, `assistant`, `summary` or `system`, the message in `message`
//! with Anthropic's content blocks (`text`, `thinking`, `tool_use`,
//! `tool_result`), `cwd` and `sessionId` on each, linked by `parentUuid`
//! (see `docs/foreign-sessions.md`). Records of a subagent (`isSidechain`)
//! and Claude Code's own context for its model (`isMeta`, `attachment`) are
//! left out and counted; a compaction's `summary` is kept as text.

use std::path::PathBuf;

use axon_protocol::ContentPart;
use serde_json::Value;

use super::{Builder, Imported, result_text};

pub fn read(text: &str) -> Imported {
    let mut imported = Imported::default();
    let mut b = Builder::default();
    let mut records: Vec<Value> = Vec::new();
    let mut leaf: Option<String> = None;
    // Kept after the conversation: a line that cannot be read has no place
    // in the chain.
    let mut unreadable: Vec<(usize, &str)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(record) => {
                if record.get("type").and_then(Value::as_str) == Some("last-prompt")
                    && let Some(uuid) = record.get("leafUuid").and_then(Value::as_str)
                {
                    leaf = Some(uuid.to_string());
                }
                records.push(record);
            }
            Err(_) => unreadable.push((n + 1, line)),
        }
    }
    let conversation = chain(&records, leaf.as_deref(), &mut b);
    let (mut sidechain, mut meta, mut attachments) = (0usize, 0usize, 0usize);
    for record in conversation {
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
            // Claude Code's own context for its model (files it attached,
            // reminders): not what the user said.
            Some("attachment") => attachments += 1,
            // Claude Code's status lines (hooks, compaction boundaries).
            Some("system") => {}
            Some(other) => {
                b.unknown(&format!("a Claude Code record of type `{other}`"), &record.to_string())
            }
            None => b.unknown("a record without a type", &record.to_string()),
        }
    }
    for (n, line) in unreadable {
        b.unknown(&format!("line {n} is not JSON"), line);
    }
    if sidechain > 0 {
        b.note(format!("left out {sidechain} records of Claude Code's subagents (sidechains)"));
    }
    if meta > 0 {
        b.note(format!("left out {meta} notes Claude Code added for its model (isMeta)"));
    }
    if attachments > 0 {
        b.note(format!("left out {attachments} attachments Claude Code added for its model"));
    }
    (imported.messages, imported.notes) = b.finish();
    imported
}

/// The conversation: the records of the `parentUuid` chain ending at the
/// leaf (the last prompt's, else the last record in it), oldest first.
/// Records without a `uuid` are Claude Code's bookkeeping (request logs,
/// queue and cost state) and never part of it; records of other branches
/// (an edited or retried prompt) are left out and counted.
fn chain<'a>(records: &'a [Value], leaf: Option<&str>, b: &mut Builder) -> Vec<&'a Value> {
    let uuid = |r: &Value| r.get("uuid").and_then(Value::as_str).map(str::to_string);
    let linked: Vec<&Value> = records.iter().filter(|r| uuid(r).is_some()).collect();
    let by_uuid: std::collections::HashMap<String, &Value> =
        linked.iter().filter_map(|r| Some((uuid(r)?, *r))).collect();
    let start = leaf.and_then(|l| by_uuid.get(l).copied()).or_else(|| {
        linked
            .iter()
            .rev()
            .find(|r| r.get("isSidechain").and_then(Value::as_bool) != Some(true))
            .copied()
    });
    let Some(mut at) = start else { return Vec::new() };
    let mut out = vec![at];
    while let Some(parent) = at.get("parentUuid").and_then(Value::as_str) {
        let Some(next) = by_uuid.get(parent).copied() else { break };
        if out.len() > linked.len() {
            break; // a loop: never in a file Claude Code wrote
        }
        out.push(next);
        at = next;
    }
    out.reverse();
    let others = linked.len().saturating_sub(out.len());
    let sidechains = linked
        .iter()
        .filter(|r| r.get("isSidechain").and_then(Value::as_bool) == Some(true))
        .count();
    if others > sidechains {
        b.note(format!(
            "left out {} records of other branches of the conversation (edited or retried prompts)",
            others - sidechains
        ));
    }
    out
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
                    Some("image") => image(b, block),
                    _ => b.unknown("a user content block of an unknown kind", &block.to_string()),
                }
            }
        }
        other => b.unknown("user content of an unknown shape", &other.to_string()),
    }
}

/// An image the user attached: a base64 source (the Messages API's) joins
/// the prompt, kept beside the session file like any other image; any
/// other source (a URL, a file id) is noted, not fetched.
fn image(b: &mut Builder, block: &Value) {
    let source = block.get("source");
    let field = |name: &str| source.and_then(|s| s.get(name)).and_then(Value::as_str);
    match (field("type"), field("media_type"), field("data")) {
        (Some("base64"), Some(media_type), Some(data)) => b.user_part(ContentPart::Image {
            media_type: media_type.to_string(),
            data: data.to_string(),
        }),
        _ => b.note("an image the user attached by URL or file id (not imported)".into()),
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
