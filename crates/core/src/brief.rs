//! The tools as a small context window can afford them.
//!
//! A model whose window is below [`SMALL_WINDOW`] tokens (a local 8k model)
//! would spend a third of it on tool definitions before the first prompt.
//! For such a window the tools offered are cut: the ones that are not the
//! work itself are left out (`todo`; `multi_edit` and `apply_patch`, whose
//! work `edit_file` and `write_file` do one change at a time; background
//! commands, `shell_output`, `shell_kill` and shell's `background`; the
//! web, `web_fetch` and `web_search`, whose pages alone would fill such a
//! window; and delegation to subagents, `task` and `agent_*`, which costs
//! a second context of the same small size), each
//! description keeps its first sentences (at most [`BRIEF_DESCRIPTION`]
//! characters, never less than one sentence), a parameter's description its
//! first sentence, and schema details a model does not need to call well
//! (`format`, `title`, descriptions nested below a parameter) go.
//!
//! Guarantees: only what is offered changes, never what is accepted: the
//! registry still checks every call against the tool's full schema (and
//! its error says what was wrong). Names, types, `required`, `enum`,
//! `const` and bounds are kept, so a call that fits the brief schema is
//! the call the full one describes. Windows of [`SMALL_WINDOW`] and above
//! get the tools exactly as they are.

use axon_protocol::ToolSpec;
use serde_json::Value;

/// Below this many tokens of context window the tools are offered brief.
pub const SMALL_WINDOW: u64 = 16_000;
/// The most characters of a tool's description kept (whole sentences).
pub const BRIEF_DESCRIPTION: usize = 240;

/// Whether `name` is left out for a small window.
fn left_out(name: &str) -> bool {
    matches!(
        name,
        "todo"
            | "task"
            | "multi_edit"
            | "apply_patch"
            | "shell_output"
            | "shell_kill"
            | "web_fetch"
            | "web_search"
    ) || name.starts_with("agent_")
}

/// Parameters left out for a small window, by tool: what needs a tool left
/// out (a background command needs shell_output to be read).
const LEFT_OUT_PARAMETERS: &[(&str, &str)] = &[("shell", "background")];

/// `specs` as a model with `window` tokens is offered them.
pub fn tools_for_window(specs: Vec<ToolSpec>, window: u64) -> Vec<ToolSpec> {
    if window >= SMALL_WINDOW {
        return specs;
    }
    specs
        .into_iter()
        .filter(|spec| !left_out(&spec.name))
        .map(|mut spec| {
            spec.description = sentences(&spec.description, BRIEF_DESCRIPTION);
            brief_schema(&mut spec.input_schema);
            for (_, parameter) in LEFT_OUT_PARAMETERS.iter().filter(|(tool, _)| *tool == spec.name)
            {
                if let Some(Value::Object(properties)) = spec.input_schema.get_mut("properties") {
                    properties.remove(*parameter);
                }
            }
            spec
        })
        .collect()
}

/// The whole sentences of `text` that fit in `limit` characters; the first
/// one always.
fn sentences(text: &str, limit: usize) -> String {
    let mut kept = String::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let end = sentence_end(rest);
        let sentence = rest[..end].trim();
        if !kept.is_empty() && kept.chars().count() + 1 + sentence.chars().count() > limit {
            break;
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(sentence);
        rest = rest[end..].trim_start();
    }
    kept
}

/// The byte just after the first sentence of `text`: a `.`, `!` or `?`
/// followed by white space (not the dot of "e.g." or "i.e."), or a line
/// break; else the whole text.
fn sentence_end(text: &str) -> usize {
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '\n' {
            return at + 1;
        }
        if matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|(_, next)| next.is_whitespace())
            && !ABBREVIATIONS.iter().any(|short| text[..at].ends_with(short))
        {
            return at + 1;
        }
    }
    text.len()
}

/// Words whose dot does not end a sentence (without that dot).
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs"];

/// The schema without what a model does not need to call the tool well.
fn brief_schema(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    map.remove("$schema");
    map.remove("title");
    // The arguments' own description repeats the tool's.
    map.remove("description");
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for property in properties.values_mut() {
            brief_property(property);
        }
    }
}

/// One parameter: its description's first sentence; nothing below it
/// described; no `format` or `title` anywhere in it.
fn brief_property(property: &mut Value) {
    let Value::Object(map) = property else { return };
    if let Some(Value::String(description)) = map.get_mut("description") {
        *description = sentences(description, 0);
    }
    for (key, value) in map.iter_mut() {
        if key != "description" {
            strip(value);
        }
    }
    map.remove("format");
    map.remove("title");
}

/// Descriptions, formats and titles removed from every level of `value`.
fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ["description", "format", "title"] {
                // A parameter named so in nested properties is kept.
                if map.get(key).is_some_and(|v| !v.is_object()) {
                    map.remove(key);
                }
            }
            for inner in map.values_mut() {
                strip(inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions_keep_whole_sentences() {
        let text = "Read a file. Each line is numbered from 1. Use start_line to read part of a \
                    large file; at most 2000 lines are shown per call and the output says how.";
        assert_eq!(sentences(text, 100), "Read a file. Each line is numbered from 1.");
        assert_eq!(sentences(text, 0), "Read a file.");
        assert_eq!(sentences("Version 1.2 of it", 5), "Version 1.2 of it");
        assert_eq!(sentences("First line\nsecond line", 0), "First line");
        assert_eq!(sentences("A glob, e.g. `*.rs` here. More.", 0), "A glob, e.g. `*.rs` here.");
    }

    #[test]
    fn a_schema_keeps_what_a_call_must_satisfy() {
        let mut schema = json!({
            "type": "object",
            "title": "Args",
            "description": "The tool's arguments.",
            "properties": {
                "end_line": {"type": "integer", "format": "uint64", "minimum": 0,
                             "description": "Last line. Defaults to the end."},
                "mode": {"oneOf": [{"type": "string", "const": "a", "description": "A."}],
                         "description": "How. More."}
            },
            "required": ["end_line"]
        });
        brief_schema(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "end_line": {"type": "integer", "minimum": 0, "description": "Last line."},
                    "mode": {"oneOf": [{"type": "string", "const": "a"}], "description": "How."}
                },
                "required": ["end_line"]
            })
        );
    }

    #[test]
    fn a_large_window_gets_the_tools_as_they_are() {
        let spec = ToolSpec {
            name: "todo".into(),
            description: "One. Two. Three.".into(),
            input_schema: json!({"type": "object", "title": "T"}),
            annotations: Default::default(),
        };
        assert_eq!(tools_for_window(vec![spec.clone()], SMALL_WINDOW), vec![spec.clone()]);
        assert!(tools_for_window(vec![spec], SMALL_WINDOW - 1).is_empty());
    }

    #[test]
    fn a_small_window_cannot_start_what_it_cannot_read() {
        let shell = ToolSpec {
            name: "shell".into(),
            description: "Run.".into(),
            input_schema: json!({"type": "object", "properties": {
                "command": {"type": "string"}, "background": {"type": "boolean"}}}),
            annotations: Default::default(),
        };
        let output = ToolSpec { name: "shell_output".into(), ..shell.clone() };
        let brief = tools_for_window(vec![shell, output], SMALL_WINDOW - 1);
        assert_eq!(brief.len(), 1);
        assert_eq!(brief[0].input_schema["properties"], json!({"command": {"type": "string"}}));
    }
}
