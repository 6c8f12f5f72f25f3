//! Replies mixing prose and tool calls written in every text format read
//! the same whole ([`extract_calls`]) and streamed in any split
//! ([`CallExtractor`]), and give back exactly the prose and calls written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_llm::tool_text::{CallExtractor, Piece, extract_calls};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

const NAMES: [&str; 4] = ["read_file", "write_file", "list_dir", "search"];

fn names() -> Vec<String> {
    NAMES.map(String::from).to_vec()
}

/// Strings that tempt a reader: markers and closing tags inside JSON.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^\u{0}]{0,20}",
        Just("</tool_call>".to_string()),
        Just("<tool_call>{\"name\": \"x\"}".to_string()),
        Just("[TOOL_CALLS]".to_string()),
        Just("</function> <|python_tag|>".to_string()),
        Just("\"}]}\\".to_string()),
    ]
}

/// Argument objects a few levels deep.
fn arguments() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        tricky_string().prop_map(Value::from),
        Just(Value::Null),
    ];
    let value = leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z_]{1,8}", value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Qwen3-Coder parameters: values without `<` or newlines at their ends.
fn xml_parameters() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::btree_map("[a-z_]{1,8}", "[^<\n\u{0}]([^<\u{0}]{0,20}[^<\n\u{0}])?", 0..4)
        .prop_map(|m| m.into_iter().collect())
}

#[derive(Debug, Clone, Copy)]
enum Form {
    HermesJson,
    HermesStringArguments,
    HermesXml,
    PythonTag,
    FunctionTag,
    MistralArray,
    MistralArgs,
    MistralCallId,
}

fn form() -> impl Strategy<Value = Form> {
    prop_oneof![
        Just(Form::HermesJson),
        Just(Form::HermesStringArguments),
        Just(Form::HermesXml),
        Just(Form::PythonTag),
        Just(Form::FunctionTag),
        Just(Form::MistralArray),
        Just(Form::MistralArgs),
        Just(Form::MistralCallId),
    ]
}

/// A call written in `form`, and the call it must read as.
fn written(
    form: Form,
    name: &str,
    arguments: &Value,
    xml: &[(String, String)],
) -> (String, (String, Value)) {
    let text = match form {
        Form::HermesJson => {
            format!("<tool_call>\n{}\n</tool_call>", json!({"name": name, "arguments": arguments}))
        }
        Form::HermesStringArguments => format!(
            "<tool_call>{}</tool_call>",
            json!({"name": name, "arguments": arguments.to_string()})
        ),
        Form::HermesXml => {
            let mut text = format!("<tool_call>\n<function={name}>\n");
            for (key, value) in xml {
                text.push_str(&format!("<parameter={key}>\n{value}\n</parameter>\n"));
            }
            text + "</function>\n</tool_call>"
        }
        Form::PythonTag => {
            format!("<|python_tag|>{}", json!({"name": name, "parameters": arguments}))
        }
        Form::FunctionTag => format!("<function={name}>{arguments}</function>"),
        Form::MistralArray => {
            format!("[TOOL_CALLS][{}]", json!({"name": name, "arguments": arguments}))
        }
        Form::MistralArgs => format!("[TOOL_CALLS]{name}[ARGS]{arguments}"),
        Form::MistralCallId => format!("[TOOL_CALLS]{name}[CALL_ID]a1B2c3D4e[ARGS]{arguments}"),
    };
    let arguments = match form {
        Form::HermesXml => Value::Object(
            xml.iter()
                .map(|(key, value)| {
                    let read = serde_json::from_str(value)
                        .unwrap_or_else(|_| Value::String(value.clone()));
                    (key.clone(), read)
                })
                .collect::<Map<_, _>>(),
        ),
        _ => arguments.clone(),
    };
    (text, (name.to_string(), arguments))
}

/// Prose that cannot complete a marker (no `>`, `]` or `=`) but holds
/// plenty of their beginnings.
fn prose() -> impl Strategy<Value = String> {
    "([a-zA-Z .\n{}\"<\\[|:;]|<tool_call|\\[TOOL_CALLS|<\\|python_tag\\||<function|</tool_call|\\[ARGS|é|🎉){0,10}"
}

/// A reply, the prose it holds and the calls it holds.
fn reply() -> impl Strategy<Value = (String, String, Vec<(String, Value)>)> {
    let segment = (prose(), form(), 0..NAMES.len(), arguments(), xml_parameters());
    let mixed = (prop::collection::vec(segment, 0..5), prose()).prop_map(|(segments, tail)| {
        let (mut reply, mut text, mut calls) = (String::new(), String::new(), Vec::new());
        for (before, form, name, arguments, xml) in segments {
            let (written, call) = written(form, NAMES[name], &arguments, &xml);
            reply.push_str(&before);
            text.push_str(&before);
            reply.push_str(&written);
            calls.push(call);
        }
        reply.push_str(&tail);
        text.push_str(&tail);
        (reply, text, calls)
    });
    // Llama 3's bare form: the whole reply is call objects.
    let bare_call =
        (0..NAMES.len(), arguments(), 0..3usize).prop_map(|(name, arguments, shape)| {
            let name = NAMES[name];
            let object = match shape {
                0 => json!({"name": name, "parameters": arguments}),
                1 => json!({"name": name, "arguments": arguments}),
                _ => json!({"type": "function", "name": name, "parameters": arguments}),
            };
            (object.to_string(), (name.to_string(), arguments))
        });
    let bare = (prop::collection::vec(bare_call, 1..4), "[ \n]{0,2}", "(;|\n|; )", "[ \n]{0,2}")
        .prop_map(|(calls, lead, separator, trail)| {
            let written: Vec<String> = calls.iter().map(|(text, _)| text.clone()).collect();
            let reply = format!("{lead}{}{trail}", written.join(&separator));
            (reply, String::new(), calls.into_iter().map(|(_, call)| call).collect())
        });
    prop_oneof![4 => mixed, 1 => bare]
}

/// The reply cut at these byte offsets (snapped to characters), streamed.
fn streamed(reply: &str, cuts: impl IntoIterator<Item = usize>) -> (String, Vec<(String, Value)>) {
    let mut at: Vec<usize> = cuts
        .into_iter()
        .map(|mut at| {
            while !reply.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    at.sort_unstable();
    at.dedup();
    let mut extractor = CallExtractor::new(names());
    let mut pieces = Vec::new();
    let mut from = 0;
    for cut in at.into_iter().chain([reply.len()]) {
        pieces.extend(extractor.push(&reply[from..cut]));
        from = cut;
    }
    pieces.extend(extractor.finish());
    let (mut text, mut calls) = (String::new(), Vec::new());
    for piece in pieces {
        match piece {
            Piece::Text(t) => text.push_str(&t),
            Piece::Call { name, arguments } => calls.push((name, arguments)),
        }
    }
    (text, calls)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_reply_parses_the_same_however_it_is_split(
        (reply, text, calls) in reply(),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
        every_char in any::<bool>(),
    ) {
        let whole = extract_calls(&reply, &names());
        prop_assert_eq!(&whole.0, &text, "prose of {:?}", reply);
        prop_assert_eq!(&whole.1, &calls, "calls of {:?}", reply);
        let split = if every_char {
            streamed(&reply, 0..reply.len())
        } else {
            streamed(&reply, cuts.iter().map(|cut| cut.index(reply.len() + 1)))
        };
        prop_assert_eq!(split, whole, "split {:?}", reply);
    }
}
