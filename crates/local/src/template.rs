//! The model's own chat template, rendered as Hugging Face renders it.
//!
//! GGUF files carry the Jinja template of the model they were converted
//! from (`tokenizer.chat_template`). llama.cpp's C API applies only a fixed
//! list of known templates and never passes tools, so the template is
//! rendered here with minijinja, with what HF's `apply_chat_template` gives
//! it: `messages`, `tools` (OpenAI's function form), `add_generation_prompt`,
//! `bos_token`, `eos_token`, Python's string methods and `raise_exception`.
//!
//! Guarantees: the history reaches the template in OpenAI's message form;
//! a template that uses neither tools nor a tool role still sees every tool
//! result, as a user message naming the call it answers; a model without a
//! template gets ChatML, which small instruct models are trained on most.

use axon_protocol::{Message, Role, ToolSpec};
use minijinja::{Environment, Error, ErrorKind, context};
use serde_json::{Value, json};

/// ChatML, for GGUF files without a template of their own.
const CHATML: &str = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// A compiled chat template and the special tokens it is given.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// Whether the template reads `tools` (else tools travel in the system
    /// prompt, in the text protocol).
    pub takes_tools: bool,
    /// Whether the template knows the `tool` role.
    takes_tool_role: bool,
    /// Whether call ids must be 9 letters or digits (Mistral).
    short_ids: bool,
    bos: String,
    eos: String,
}

impl ChatTemplate {
    /// Compiles `source` (the GGUF's template; `None`: ChatML).
    pub fn new(source: Option<&str>, bos: &str, eos: &str) -> Result<Self, String> {
        let source = source.unwrap_or(CHATML).to_string();
        let source_text = source.clone();
        let takes_tools = source.contains("tools");
        let takes_tool_role = source.contains("\"tool\"") || source.contains("'tool'");
        let mut env = Environment::new();
        // Hugging Face renders with these two on; without them multi-line
        // templates gain newlines and indentation the model never saw.
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        minijinja_contrib::add_to_environment(&mut env);
        // Python's json.dumps, as HF's `tojson`: ", " and ": " between
        // items, keys in their order, no HTML escapes.
        env.add_filter("tojson", python_json);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        });
        // Templates print today's date in system prompts (Llama 3). One
        // fixed date keeps the prompt, and so the prefix cache, stable;
        // the model learns nothing from the real one.
        env.add_function("strftime_now", |_format: String| -> String { "26 Jul 2024".into() });
        env.add_template_owned("chat", source)
            .map_err(|e| format!("the model's chat template does not compile: {e}"))?;
        // Mistral's templates refuse call ids that are not 9 letters or
        // digits.
        let short_ids = source_has_mistral_ids(&source_text);
        Ok(ChatTemplate {
            env,
            takes_tools,
            takes_tool_role,
            short_ids,
            bos: bos.into(),
            eos: eos.into(),
        })
    }

    /// The prompt for `system` + `history`, ending where the assistant's
    /// answer starts. `tools` are given to templates that take them.
    pub fn render(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpec],
    ) -> Result<String, String> {
        let mut messages = Vec::with_capacity(history.len() + 1);
        if !system.is_empty() {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in history {
            messages.push(self.wire(message));
        }
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        let tools = (self.takes_tools && !tools.is_empty()).then_some(tools);
        template
            .render(context! {
                messages => messages,
                tools => tools,
                add_generation_prompt => true,
                bos_token => self.bos,
                eos_token => self.eos,
            })
            .map_err(|e| format!("the model's chat template failed: {e}"))
    }

    /// A call id as the template accepts it: the same id always maps to
    /// the same 9 characters, so a call and its result still match.
    fn id(&self, id: &str) -> String {
        if !self.short_ids {
            return id.to_string();
        }
        // FNV-1a, written out in base 36.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in id.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        (0..9)
            .map(|i| {
                let digit = (hash >> (i * 7)) % 36;
                char::from(DIGITS[usize::try_from(digit).unwrap_or(0)])
            })
            .collect()
    }

    fn wire(&self, message: &Message) -> Value {
        let text = message.text();
        match message.role {
            Role::System => json!({"role": "system", "content": text}),
            Role::User => json!({"role": "user", "content": text}),
            Role::Assistant if message.tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": self.id(&c.id), "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
                json!({"role": "assistant", "content": text, "tool_calls": calls})
            }
            Role::Tool if self.takes_tool_role => json!({
                "role": "tool",
                "tool_call_id": message.tool_call_id.as_deref().map(|id| self.id(id)),
                "content": text,
            }),
            Role::Tool => {
                let call = message.tool_call_id.as_deref().unwrap_or("the call");
                // Small models copy their last call forever unless the
                // result says what it is for.
                json!({"role": "user", "content": format!(
                    "Result of {call}:\n{text}\n\nNow answer my request in plain text with this result. Call a tool again only for something you do not have yet."
                )})
            }
        }
    }
}

fn source_has_mistral_ids(source: &str) -> bool {
    source.contains("[TOOL_CALLS]") && source.contains("9")
}

/// `value | tojson` (or `tojson(indent=N)`) as Python's `json.dumps`
/// writes it.
fn python_json(
    value: minijinja::Value,
    kwargs: minijinja::value::Kwargs,
) -> Result<minijinja::Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    kwargs.assert_all_used()?;
    let json: Value = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let out = match indent {
        None => {
            let mut out = String::new();
            write_python_json(&json, &mut out);
            out
        }
        // With an indent Python separates with "," and ": ", as serde's
        // pretty printer does.
        Some(width) => {
            let spaces = " ".repeat(width);
            let formatter = serde_json::ser::PrettyFormatter::with_indent(spaces.as_bytes());
            let mut bytes = Vec::new();
            let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
            serde::Serialize::serialize(&json, &mut serializer)
                .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    Ok(minijinja::Value::from_safe_string(out))
}

fn write_python_json(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_python_json(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::ToolCall;

    fn message(role: Role, text: &str) -> Message {
        let mut message = Message::user(text);
        message.role = role;
        message
    }

    #[test]
    fn chatml_is_the_fallback_and_ends_at_the_answer() {
        let t = ChatTemplate::new(None, "", "").unwrap();
        let prompt = t.render("be brief", &[message(Role::User, "hi")], &[]).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_tool_result_reaches_a_template_without_a_tool_role() {
        let t = ChatTemplate::new(None, "", "").unwrap();
        let mut result = message(Role::Tool, "42 lines");
        result.tool_call_id = Some("block_1".into());
        let prompt = t.render("", &[message(Role::User, "read it"), result], &[]).unwrap();
        assert!(
            prompt.contains(
                "<|im_start|>user\nResult of block_1:\n42 lines\n\nNow answer my request"
            )
        );
    }

    #[test]
    fn tools_and_calls_reach_a_template_that_takes_them() {
        let source = "{% for t in tools %}[{{ t.function.name }}]{% endfor %}{% for m in messages %}{{ m.role }}:{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments | tojson }}{% else %}{{ m.content.strip() }}{% endif %};{% endfor %}";
        let t = ChatTemplate::new(Some(source), "<s>", "</s>").unwrap();
        let mut call = message(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.txt"}),
        });
        let mut result = message(Role::Tool, " text ");
        result.tool_call_id = Some("c1".into());
        let spec = ToolSpec {
            name: "read_file".into(),
            description: "reads".into(),
            input_schema: json!({"type": "object"}),
            annotations: Default::default(),
        };
        let prompt = t.render("", &[message(Role::User, " go "), call, result], &[spec]).unwrap();
        assert!(prompt.starts_with("[read_file]user:go;assistant:{\"path\": \"a.txt\"};user:Result of c1:\n text \n\nNow answer my request"), "{prompt}");
    }

    #[test]
    fn raise_exception_is_an_error_not_a_panic() {
        let t = ChatTemplate::new(Some("{{ raise_exception('roles must alternate') }}"), "", "")
            .unwrap();
        let err = t.render("", &[], &[]).unwrap_err();
        assert!(err.contains("roles must alternate"), "{err}");
    }
}

#[cfg(test)]
mod hf_tests {
    use super::*;

    #[test]
    fn blocks_are_trimmed_and_json_is_written_as_python_does() {
        let source = "{% for m in messages %}\n    {{ m.role }}\n{% endfor %}{{ tools | tojson }}";
        let t = ChatTemplate::new(Some(source), "", "").unwrap();
        let spec = ToolSpec {
            name: "read_file".into(),
            description: "a <b>".into(),
            input_schema: json!({"type": "object", "properties": {"z": {}, "a": {}}}),
            annotations: Default::default(),
        };
        let prompt = t.render("", &[Message::user("x")], &[spec]).unwrap();
        assert_eq!(
            prompt,
            "    user\n[{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"description\": \"a <b>\", \"parameters\": {\"type\": \"object\", \"properties\": {\"z\": {}, \"a\": {}}}}}]"
        );
    }

    #[test]
    fn mistral_gets_nine_character_ids_that_still_match() {
        let source = "[TOOL_CALLS]{% for m in messages %}{% if m.tool_calls %}{{ m.tool_calls[0].id }}{% elif m.role == 'tool' %}={{ m.tool_call_id }}{% endif %}{% endfor %}{# 9 #}";
        let t = ChatTemplate::new(Some(source), "", "").unwrap();
        let mut call = Message::assistant("");
        call.tool_calls.push(axon_protocol::ToolCall {
            id: "call_text_0".into(),
            name: "read_file".into(),
            arguments: json!({}),
        });
        let result = Message::tool_result("call_text_0", axon_protocol::ToolOutput::text("x"));
        let prompt = t.render("", &[Message::user("go"), call, result], &[]).unwrap();
        let (id, answered) = prompt.trim_start_matches("[TOOL_CALLS]").split_once('=').unwrap();
        assert_eq!(id.len(), 9, "{prompt}");
        assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(id, answered);
    }
}
