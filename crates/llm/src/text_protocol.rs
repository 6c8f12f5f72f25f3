//! Tools for models without native tool calling (seed 000's protocol).
//!
//! The system prompt describes the tools and asks for calls as fenced
//! blocks:
//!
//! ````text
//! ```json:tool
//! {"tool": "read_note", "params": {"path": "Daily/2025-01-15.md"}}
//! ```
//! ````
//!
//! [`parse`] splits a reply into its prose and its calls, in order. A block
//! that is not valid JSON, or lacks `tool` or `params`, becomes an error the
//! agent feeds back to the model; parsing never fails as a whole.

use axon_protocol::ToolSpec;
use serde_json::Value;

mod visible;

pub use visible::VisibleText;

pub const FENCE: &str = "```json:tool";
const CLOSE: &str = "```";

/// One call found in a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct TextToolCall {
    pub tool: String,
    pub params: Value,
}

/// A reply split into prose and calls.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedReply {
    /// The text outside the tool blocks, in order.
    pub text: String,
    /// Each block in order: a call, or why it could not be read.
    pub calls: Vec<Result<TextToolCall, String>>,
}

impl ParsedReply {
    pub fn has_tool_calls(&self) -> bool {
        !self.calls.is_empty()
    }
}

/// The system-prompt section that teaches the model the protocol.
pub fn instructions(tools: &[ToolSpec]) -> String {
    let mut out = String::from(
        "## Tools\nYou can use tools. To call one, write a fenced block exactly like this, \
         one block per call:\n\n```json:tool\n{\"tool\": \"TOOL_NAME\", \"params\": {...}}\n```\n\n\
         After your blocks, stop and wait: the results come back in the next message. When \
         you need no tool, answer in plain text without such blocks.\n\nAvailable tools:\n",
    );
    for tool in tools {
        out.push_str(&format!(
            "\n### {}\n{}\nParameters (JSON Schema): {}\n",
            tool.name, tool.description, tool.input_schema
        ));
    }
    out
}

/// Splits `reply` into prose and tool calls.
pub fn parse(reply: &str) -> ParsedReply {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut rest = reply;
    while let Some(start) = rest.find(FENCE) {
        text.push_str(&rest[..start]);
        let body = &rest[start + FENCE.len()..];
        let (call, consumed) = read_block(body);
        calls.push(call);
        rest = &body[consumed..];
    }
    text.push_str(rest);
    ParsedReply { text: text.trim().to_string(), calls }
}

/// Reads one block's JSON and its closing fence from `body` (what follows
/// the opening fence). Returns the call and how many bytes it used.
fn read_block(body: &str) -> (Result<TextToolCall, String>, usize) {
    // The JSON value is read first, so a ``` inside a string cannot end the
    // block early.
    let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            let after_json = values.byte_offset();
            let consumed = match body[after_json..].find(CLOSE) {
                Some(close) if body[after_json..after_json + close].trim().is_empty() => {
                    after_json + close + CLOSE.len()
                }
                _ => return (Err(unterminated()), skip_to_close(body)),
            };
            (call_from(value), consumed)
        }
        Some(Err(e)) => (Err(format!("Invalid JSON: {e}")), skip_to_close(body)),
        None => (Err("Invalid JSON: the block is empty".to_string()), skip_to_close(body)),
    }
}

fn unterminated() -> String {
    "Invalid JSON: the json:tool block is not closed with ``` after the JSON object".to_string()
}

/// Past the next closing fence, or the end when there is none.
fn skip_to_close(body: &str) -> usize {
    body.find(CLOSE).map_or(body.len(), |i| i + CLOSE.len())
}

fn call_from(value: Value) -> Result<TextToolCall, String> {
    let Value::Object(mut object) = value else {
        return Err(format!("Invalid JSON: expected an object, got {value}"));
    };
    let tool = match object.remove("tool") {
        Some(Value::String(tool)) if !tool.is_empty() => tool,
        Some(other) => {
            return Err(format!("Invalid parameters: \"tool\" must be a name, not {other}"));
        }
        None => return Err("Missing required field: tool".to_string()),
    };
    let params = match object.remove("params") {
        Some(params @ Value::Object(_)) => params,
        Some(other) => {
            return Err(format!("Invalid parameters: \"params\" must be an object, not {other}"));
        }
        None => return Err("Missing required field: params".to_string()),
    };
    Ok(TextToolCall { tool, params })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prose_and_calls_are_separated_in_order() {
        let reply = "Let me look.\n```json:tool\n{\"tool\": \"read_note\", \"params\": {\"path\": \"a\"}}\n```\nthen\n```json:tool\n{\"tool\": \"list_folder\", \"params\": {}}\n```\n";
        let parsed = parse(reply);
        assert_eq!(parsed.text, "Let me look.\n\nthen");
        assert_eq!(
            parsed.calls,
            [
                Ok(TextToolCall { tool: "read_note".into(), params: json!({"path": "a"}) }),
                Ok(TextToolCall { tool: "list_folder".into(), params: json!({}) }),
            ]
        );
    }

    #[test]
    fn fences_inside_json_strings_do_not_end_the_block() {
        let reply = "```json:tool\n{\"tool\": \"create_note\", \"params\": {\"content\": \"```rust\\nfn x() {}\\n```\"}}\n```\nDone.";
        let parsed = parse(reply);
        assert_eq!(parsed.text, "Done.");
        assert_eq!(parsed.calls[0].as_ref().unwrap().params["content"], "```rust\nfn x() {}\n```");
    }

    #[test]
    fn broken_blocks_become_errors() {
        let parsed =
            parse("```json:tool\n{not json}\n```\nok\n```json:tool\n{\"params\": {}}\n```");
        assert!(parsed.calls[0].as_ref().unwrap_err().starts_with("Invalid JSON:"));
        assert_eq!(parsed.calls[1], Err("Missing required field: tool".to_string()));
        assert_eq!(parsed.text, "ok");
    }
}
