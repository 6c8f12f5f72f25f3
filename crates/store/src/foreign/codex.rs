//! Codex's rollouts: one `{timestamp, type, payload}` a line. `session_meta`
//! gives the id and folder; `response_item`s are the conversation as the
//! Responses API has it (`message` with `input_text`/`output_text` parts,
//! `reasoning`, `function_call` and `function_call_output`, `custom_tool_call`
//! and its output, `local_shell_call`); `turn_context` names the model.
//! `event_msg`s repeat what the items hold for Codex's UI and are skipped.
//! The context Codex itself adds as user or developer messages (its
//! instructions, `<environment_context>`, AGENTS.md) is left out and
//! counted: it is Codex's, not the user's.

use std::path::PathBuf;

use axon_protocol::ContentPart;
use serde_json::Value;

use super::{Builder, Imported};

/// How the user-role messages Codex writes for its model begin.
const CODEX_CONTEXT: [&str; 4] =
    ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>"];

pub fn read(text: &str) -> Imported {
    let mut imported = Imported::default();
    let mut b = Builder::default();
    let mut context = 0usize;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            b.unknown(&format!("line {} is not JSON", n + 1), line);
            continue;
        };
        let payload = record.get("payload").unwrap_or(&Value::Null);
        let field = |name: &str| payload.get(name).and_then(Value::as_str);
        match record.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                imported.id = field("id").map(str::to_string);
                imported.workspace = field("cwd").map(PathBuf::from);
            }
            Some("turn_context") => {
                if let Some(model) = field("model") {
                    imported.model = Some(model.to_string());
                }
                if let Some(cwd) = field("cwd") {
                    imported.workspace = Some(PathBuf::from(cwd));
                }
            }
            Some("response_item") => item(&mut b, payload, &mut context, line),
            Some("compacted") => {
                if let Some(summary) = field("message") {
                    b.user_text(&format!("[Codex's summary of the conversation]\n{summary}"));
                }
            }
            // For Codex's screen and its own accounting: what they say is in
            // the response items.
            Some("event_msg") | Some("world_state") | Some("token_usage_record") => {}
            Some(other) => b.unknown(&format!("a Codex record of type `{other}`"), line),
            None => b.unknown("a record without a type", line),
        }
    }
    if context > 0 {
        b.note(format!("left out {context} messages of context Codex wrote for its model"));
    }
    (imported.messages, imported.notes) = b.finish();
    imported
}

fn item(b: &mut Builder, payload: &Value, context: &mut usize, line: &str) {
    let field = |name: &str| payload.get(name).and_then(Value::as_str).unwrap_or("").to_string();
    match payload.get("type").and_then(Value::as_str) {
        Some("message") => {
            let text = parts_text(payload.get("content"));
            match payload.get("role").and_then(Value::as_str) {
                Some("user") if written_by_codex(payload, &text) => *context += 1,
                Some("user") => b.user_text(&text),
                Some("assistant") => b.assistant_part(ContentPart::text(text)),
                // Codex's own instructions to its model.
                Some("developer") | Some("system") => *context += 1,
                _ => b.unknown("a message of an unknown role", line),
            }
        }
        Some("reasoning") => {
            let summary = payload
                .get("summary")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            if !summary.trim().is_empty() {
                b.assistant_part(ContentPart::Thinking { text: summary, signature: None });
            }
        }
        Some("function_call") => {
            let raw = field("arguments");
            let arguments = serde_json::from_str(&raw).unwrap_or(Value::String(raw));
            b.call(field("call_id"), field("name"), arguments);
        }
        Some("custom_tool_call") => {
            let input = serde_json::json!({ "input": field("input") });
            b.call(field("call_id"), field("name"), input);
        }
        Some("local_shell_call") => {
            let action = payload.get("action").cloned().unwrap_or(Value::Null);
            let id = if field("call_id").is_empty() { field("id") } else { field("call_id") };
            b.call(id, "local_shell".to_string(), action);
        }
        Some("function_call_output") | Some("custom_tool_call_output") => {
            let (text, is_error) = output(payload.get("output"));
            b.result(&field("call_id"), text, is_error);
        }
        _ => b.unknown("a Codex response item of an unknown kind", line),
    }
}

/// Whether a user-role message is Codex's context rather than the user's:
/// its items' provenance says `harness` (0.171 on), or, in older rollouts,
/// it begins with one of Codex's tags.
fn written_by_codex(payload: &Value, text: &str) -> bool {
    let provenance: Vec<&str> = payload
        .pointer("/internal_chat_message_metadata_passthrough/content_item_metadata")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.pointer("/provenance/type").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if !provenance.is_empty() {
        return !provenance.contains(&"user");
    }
    CODEX_CONTEXT.iter().any(|c| text.trim_start().starts_with(c))
}

/// The text of a message's `input_text` / `output_text` parts.
fn parts_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::String(text)) => text.clone(),
        _ => String::new(),
    }
}

/// A call's output: a string, or `{content, success}`; Codex's exec tool
/// writes JSON text with `output` and `metadata.exit_code`.
fn output(value: Option<&Value>) -> (String, bool) {
    match value {
        Some(Value::String(text)) => {
            // `exec_command` (0.171) writes "Process exited with code N";
            // the older `shell` JSON with `metadata.exit_code`.
            let code = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.pointer("/metadata/exit_code").and_then(Value::as_i64))
                .or_else(|| {
                    let rest = text.split("Process exited with code ").nth(1)?;
                    rest.split_whitespace().next()?.parse().ok()
                });
            (text.clone(), code.is_some_and(|code| code != 0))
        }
        Some(Value::Array(items)) => (super::result_text(&Value::Array(items.clone())), false),
        Some(Value::Object(object)) => {
            let text = super::result_text(object.get("content").unwrap_or(&Value::Null));
            let failed = object.get("success").and_then(Value::as_bool) == Some(false);
            (text, failed)
        }
        Some(other) => (other.to_string(), false),
        None => (String::new(), false),
    }
}
