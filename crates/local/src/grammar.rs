//! Tool calls that are valid once started: a lazy GBNF grammar built from
//! the tools' JSON Schemas.
//!
//! The model writes freely until it writes the call syntax's opening
//! marker (the trigger); from there llama.cpp's grammar sampler allows only
//! tokens that continue one well-formed call: the marker, a JSON object
//! naming one of the tools, its arguments matching that tool's schema
//! (required fields present, types right), and the closing marker. After
//! that the model may write on, but not start a second call unchecked.
//!
//! The schema-to-GBNF conversion is llama.cpp's own
//! (`json_schema_to_grammar`), the one its server uses; a tool whose schema
//! it cannot convert is constrained to a JSON object instead of dropped.

use axon_llm::text_protocol::FENCE;
use axon_llm::tool_text::CallFormat;
use axon_protocol::ToolSpec;
use serde_json::{Value, json};

/// How a call is written in this model's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallSyntax {
    /// axon's ```json:tool blocks, for templates without tool support.
    Fence,
    /// The template's own format.
    Model(CallFormat),
}

/// A grammar and the text that switches it on.
#[derive(Debug, Clone, PartialEq)]
pub struct LazyGrammar {
    pub gbnf: String,
    pub trigger: String,
}

/// The grammar for calls to `tools` in `syntax`; `None` when there are no
/// tools, or the syntax has no literal start (Llama 3's bare JSON calls).
pub fn for_tools(
    syntax: CallSyntax,
    tools: &[ToolSpec],
    to_gbnf: impl Fn(&str) -> Option<String>,
) -> Option<LazyGrammar> {
    if tools.is_empty() {
        return None;
    }
    let (name_key, args_key, open, close) = match syntax {
        CallSyntax::Fence => ("tool", "params", format!("{FENCE}\n"), "\n```".to_string()),
        CallSyntax::Model(CallFormat::Hermes) => {
            ("name", "arguments", "<tool_call>\n".into(), "\n</tool_call>".into())
        }
        CallSyntax::Model(CallFormat::Mistral) => {
            ("name", "arguments", "[TOOL_CALLS][".into(), "]".into())
        }
        // Llama 3 writes its calls as bare JSON, with no literal start to
        // switch a grammar on; the parser still reads them.
        CallSyntax::Model(CallFormat::Llama3) => return None,
    };
    let trigger = open.trim_end_matches(['\n', '[']).to_string();
    let one_of: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "type": "object",
                "properties": {
                    name_key: {"const": tool.name},
                    args_key: arguments_schema(&tool.input_schema),
                },
                "required": [name_key, args_key],
                "additionalProperties": false,
            })
        })
        .collect();
    let schema = json!({"anyOf": one_of});
    let call = to_gbnf(&schema.to_string()).or_else(|| {
        // The converter refused a schema: keep the names exact and the
        // arguments an object, which still beats free text.
        let loose: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"type": "object",
                    "properties": {name_key: {"const": t.name}, args_key: {"type": "object"}},
                    "required": [name_key, args_key]})
            })
            .collect();
        to_gbnf(&json!({"anyOf": loose}).to_string())
    })?;
    // After the call the model may go on writing, but not start another
    // call unchecked: a backtick is where the grammar would lose track.
    // Ending right after the call is allowed too.
    let mut gbnf =
        format!("root ::= {} call {} after\nafter ::= [^`]*\n", literal(&open), literal(&close));
    for line in call.lines() {
        match line.strip_prefix("root ::=") {
            Some(rest) => gbnf.push_str(&format!("call ::={rest}\n")),
            None => {
                gbnf.push_str(line);
                gbnf.push('\n');
            }
        }
    }
    Some(LazyGrammar { gbnf, trigger })
}

/// A tool's schema as the grammar should see it: metadata keys the
/// converter does not need are dropped; an empty schema is any object.
fn arguments_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if !map.is_empty() => {
            let mut map = map.clone();
            for key in ["$schema", "title", "$id"] {
                map.remove(key);
            }
            Value::Object(map)
        }
        _ => json!({"type": "object"}),
    }
}

/// A GBNF string literal.
fn literal(text: &str) -> String {
    if text.is_empty() {
        return "\"\"".into();
    }
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "title": "X"}),
            annotations: Default::default(),
        }
    }

    #[test]
    fn the_call_rule_is_wrapped_in_the_syntax_markers() {
        let seen = std::sync::Mutex::new(String::new());
        let grammar = for_tools(CallSyntax::Fence, &[tool("read_file")], |schema| {
            *seen.lock().unwrap() = schema.to_string();
            Some("root ::= object\nobject ::= \"{}\"\n".into())
        })
        .unwrap();
        assert_eq!(grammar.trigger, "```json:tool");
        assert_eq!(
            grammar.gbnf,
            "root ::= \"```json:tool\\n\" call \"\\n```\" after\nafter ::= [^`]*\ncall ::= object\nobject ::= \"{}\"\n"
        );
        let schema: Value = serde_json::from_str(&seen.lock().unwrap()).unwrap();
        let first = &schema["anyOf"][0];
        assert_eq!(first["properties"]["tool"]["const"], "read_file");
        assert_eq!(first["required"], json!(["tool", "params"]));
        assert!(first["properties"]["params"].get("title").is_none());
    }

    #[test]
    fn hermes_and_mistral_use_their_own_markers_and_keys() {
        let echo = |s: &str| Some(format!("root ::= x\nx ::= \"{}\"\n", s.len()));
        let hermes = for_tools(CallSyntax::Model(CallFormat::Hermes), &[tool("a")], echo).unwrap();
        assert_eq!(hermes.trigger, "<tool_call>");
        assert!(
            hermes.gbnf.starts_with("root ::= \"<tool_call>\\n\" call \"\\n</tool_call>\" after")
        );
        let mistral =
            for_tools(CallSyntax::Model(CallFormat::Mistral), &[tool("a")], echo).unwrap();
        assert_eq!(mistral.trigger, "[TOOL_CALLS]");
        assert!(mistral.gbnf.starts_with("root ::= \"[TOOL_CALLS][\" call \"]\" after"));
    }

    #[test]
    fn no_tools_no_grammar_and_a_refused_schema_falls_back() {
        assert!(for_tools(CallSyntax::Fence, &[], |_| Some("root ::= x".into())).is_none());
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let grammar = for_tools(CallSyntax::Fence, &[tool("a")], |schema| {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (n == 1).then(|| {
                assert!(schema.contains("\"params\":{\"type\":\"object\"}"), "{schema}");
                "root ::= y\n".to_string()
            })
        })
        .unwrap();
        assert!(grammar.gbnf.contains("call ::= y"));
    }
}
