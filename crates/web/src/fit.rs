//! What the browser gets of an event: long texts cut.
//!
//! The log keeps every event of the conversation for every page that
//! connects later, so a command that printed 50 MB, a file read whole, or a
//! write's content must not be kept (and replayed to each tab) whole. Each
//! text a page shows is cut at [`MAX_TEXT`] bytes on a character boundary
//! with a note saying how much was left out; images past [`MAX_IMAGE`]
//! become such a note. The session file and the model keep everything.

use axon_protocol::{AgentEvent, ContentPart, Message, Preview, ToolCall};
use serde_json::Value;

/// The most of one text (a tool's output, an argument, a message, a diff)
/// sent to the browser.
pub const MAX_TEXT: usize = 128 * 1024;

/// The largest image (base64 bytes) sent to the browser.
pub const MAX_IMAGE: usize = 4 * 1024 * 1024;

/// Cuts what is too long to send to a page.
pub fn fit(event: &mut AgentEvent) {
    match event {
        AgentEvent::Observation { output, .. } => parts(&mut output.content),
        AgentEvent::Action { call, preview, .. } => {
            arguments(call);
            if let Some(preview) = preview {
                fit_preview(preview);
            }
        }
        AgentEvent::ApprovalRequested { call, preview, .. } => {
            arguments(call);
            fit_preview(preview);
        }
        AgentEvent::History { messages } => messages.iter_mut().for_each(message),
        // A subagent's results are as long as anyone's.
        AgentEvent::Subagent { event, .. } => fit(event),
        _ => {}
    }
}

fn message(message: &mut Message) {
    parts(&mut message.content);
    message.tool_calls.iter_mut().for_each(arguments);
}

fn parts(content: &mut [ContentPart]) {
    for part in content {
        match part {
            ContentPart::Text { text } | ContentPart::Thinking { text, .. } => cut(text),
            ContentPart::Image { data, .. } | ContentPart::Audio { data, .. }
                if data.len() > MAX_IMAGE =>
            {
                let note = format!("[{} KiB of media not sent to the browser]", data.len() / 1024);
                *part = ContentPart::text(note);
            }
            _ => {}
        }
    }
}

fn arguments(call: &mut ToolCall) {
    value(&mut call.arguments);
}

fn value(value: &mut Value) {
    match value {
        Value::String(text) => cut(text),
        Value::Array(items) => items.iter_mut().for_each(self::value),
        Value::Object(fields) => fields.values_mut().for_each(self::value),
        _ => {}
    }
}

fn fit_preview(preview: &mut Preview) {
    match preview {
        Preview::Diff { diff, .. } => cut(diff),
        Preview::Command { command, .. } => cut(command),
        Preview::Mcp { arguments, .. } | Preview::Arguments { arguments } => value(arguments),
        Preview::Invalid { message } => cut(message),
        Preview::Sampling { system_prompt, .. } => {
            if let Some(prompt) = system_prompt {
                cut(prompt);
            }
        }
    }
}

/// `text` cut at [`MAX_TEXT`] bytes (on a character boundary), with a note.
fn cut(text: &mut String) {
    if text.len() <= MAX_TEXT {
        return;
    }
    let mut keep = MAX_TEXT;
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    let dropped = text.len() - keep;
    text.truncate(keep);
    text.push_str(&format!("\n[… {dropped} more bytes not sent to the browser]"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::ToolOutput;
    use serde_json::json;

    #[test]
    fn long_outputs_and_arguments_are_cut_with_a_note() {
        let mut event = AgentEvent::Observation {
            call_id: "c".into(),
            name: "shell".into(),
            output: ToolOutput::text("é".repeat(MAX_TEXT)),
        };
        fit(&mut event);
        let AgentEvent::Observation { output, .. } = &event else { unreachable!() };
        let text = output.text_content();
        assert!(text.len() < MAX_TEXT + 100, "{}", text.len());
        assert!(text.ends_with(&format!("[… {} more bytes not sent to the browser]", MAX_TEXT)));

        let mut event = AgentEvent::Action {
            call: ToolCall {
                id: "w".into(),
                name: "write_file".into(),
                arguments: json!({"path": "a", "content": "x".repeat(MAX_TEXT + 1)}),
            },
            refused: false,
            preview: None,
        };
        fit(&mut event);
        let AgentEvent::Action { call, .. } = &event else { unreachable!() };
        assert_eq!(call.arguments["path"], "a");

        // A subagent's read, however deep, is cut as well.
        let read = AgentEvent::Observation {
            call_id: "r".into(),
            name: "read_file".into(),
            output: ToolOutput::text("x".repeat(MAX_TEXT * 2)),
        };
        let wrap = |event| AgentEvent::Subagent {
            call_id: "c".into(),
            agent: "a".into(),
            event: Box::new(event),
        };
        let mut event = wrap(wrap(read));
        fit(&mut event);
        assert!(serde_json::to_string(&event).unwrap().len() < MAX_TEXT + 500);
        assert!(
            call.arguments["content"]
                .as_str()
                .unwrap()
                .ends_with("1 more bytes not sent to the browser]")
        );
    }

    #[test]
    fn short_texts_are_untouched() {
        let original = AgentEvent::Observation {
            call_id: "c".into(),
            name: "read_file".into(),
            output: ToolOutput::text("fine"),
        };
        let mut event = original.clone();
        fit(&mut event);
        assert_eq!(event, original);
    }
}
