//! Unit tests of the text call formats: each format read, malformed
//! blocks given back as text, replies read the same however they are
//! split, in linear work, and the stream wrapper's events.

use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};

use super::*;
use crate::{FinishReason, LlmError, ProviderEvent};

fn names() -> Vec<String> {
    ["read_file", "write_file", "list_dir", "get_weather"].map(String::from).to_vec()
}

fn extract(reply: &str) -> (String, Vec<(String, Value)>) {
    extract_calls(reply, &names())
}

fn call(name: &str, arguments: Value) -> (String, Value) {
    (name.to_string(), arguments)
}

/// The reply fed one char at a time, joined like [`extract_calls`].
fn extract_by_chars(reply: &str) -> (String, Vec<(String, Value)>) {
    let mut extractor = CallExtractor::new(names());
    let mut pieces = Vec::new();
    for c in reply.chars() {
        pieces.extend(extractor.push(c.encode_utf8(&mut [0; 4])));
    }
    pieces.extend(extractor.finish());
    join(pieces)
}

/// Reads `reply` whole, char by char and cut in two at every place, and
/// checks all agree with `text` and `calls`.
fn check(reply: &str, text: &str, calls: &[(String, Value)]) {
    let whole = extract(reply);
    assert_eq!(whole.0, text, "text of {reply:?}");
    assert_eq!(whole.1, calls, "calls of {reply:?}");
    assert_eq!(extract_by_chars(reply), whole, "char by char: {reply:?}");
    for (cut, _) in reply.char_indices() {
        let mut extractor = CallExtractor::new(names());
        let mut pieces = extractor.push(&reply[..cut]);
        pieces.extend(extractor.push(&reply[cut..]));
        pieces.extend(extractor.finish());
        assert_eq!(join(pieces), whole, "cut at {cut}: {reply:?}");
    }
}

#[test]
fn templates_are_recognised_by_their_call_syntax() {
    let qwen = "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{{ tool | tojson }}</tools>\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
    let mistral =
        "{%- if message.tool_calls %}[TOOL_CALLS][{%- for tool_call in message.tool_calls %}";
    let llama31 = "<|start_header_id|>ipython<|end_header_id|>{%- if builtin_tools is defined %}<|python_tag|>";
    let llama32 = "{{- '<|start_header_id|>system<|end_header_id|>' }}{%- if tools is not none and not tools_in_user_message %}{{- 'Environment: ipython' }}";
    let plain_llama = "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }} Use the tools wisely.";
    let chatml = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>{% endfor %}";
    assert_eq!(CallFormat::detect(qwen), Some(CallFormat::Hermes));
    assert_eq!(CallFormat::detect(mistral), Some(CallFormat::Mistral));
    assert_eq!(CallFormat::detect(llama31), Some(CallFormat::Llama3));
    assert_eq!(CallFormat::detect(llama32), Some(CallFormat::Llama3));
    assert_eq!(CallFormat::detect(plain_llama), None);
    assert_eq!(CallFormat::detect(chatml), None);
    assert_eq!(CallFormat::Hermes.trigger(), "<tool_call>");
    assert_eq!(CallFormat::Mistral.trigger(), "[TOOL_CALLS]");
    assert_eq!(CallFormat::Llama3.trigger(), "<|python_tag|>");
}

#[test]
fn hermes_blocks_are_calls_between_prose() {
    let reply = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>\nand\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": \"{\\\"path\\\": \\\".\\\"}\"}\n</tool_call>\nDone.";
    check(
        reply,
        "Let me look.\n\nand\n\nDone.",
        &[call("read_file", json!({"path": "a.rs"})), call("list_dir", json!({"path": "."}))],
    );
    // A closing tag inside a JSON string does not end the block.
    check(
        "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"</tool_call> <tool_call>\"}}</tool_call>",
        "",
        &[call("write_file", json!({"content": "</tool_call> <tool_call>"}))],
    );
    // Two calls in one block, and a call whose closing tag never came.
    check(
        "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {}}\n{\"name\": \"read_file\"}\n</tool_call>",
        "",
        &[call("list_dir", json!({})), call("read_file", json!({}))],
    );
    check(
        "<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}\nThen I read it.",
        "\nThen I read it.",
        &[call("list_dir", json!({}))],
    );
    check(
        "<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}  ",
        "  ",
        &[call("list_dir", json!({}))],
    );
}

#[test]
fn qwen3_coder_xml_calls_take_json_values_or_strings() {
    let reply = "I'll write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n<parameter=content>\nfn main() {\n    println!(\"<hi>\");\n}\n</parameter>\n<parameter=overwrite>\ntrue\n</parameter>\n<parameter=limits>\n{\"lines\": 3}\n</parameter>\n</function>\n</tool_call>";
    check(
        reply,
        "I'll write it.\n",
        &[call(
            "write_file",
            json!({"path": "src/main.rs", "content": "fn main() {\n    println!(\"<hi>\");\n}",
                   "overwrite": true, "limits": {"lines": 3}}),
        )],
    );
    // A parameter missing its closing tag runs to the next one; the same
    // form without `<tool_call>` around it; no parameters at all.
    check(
        "<function=read_file>\n<parameter=path>\na.rs\n<parameter=limit>\n10\n</function>\nok",
        "\nok",
        &[call("read_file", json!({"path": "a.rs", "limit": 10}))],
    );
    check(
        "<tool_call><function=list_dir></function></tool_call>",
        "",
        &[call("list_dir", json!({}))],
    );
    // Cut off by the end of the reply, what was read is the call.
    check(
        "<tool_call>\n<function=read_file>\n<parameter=path>\na.rs",
        "",
        &[call("read_file", json!({"path": "a.rs"}))],
    );
}

#[test]
fn llama_calls_are_read_tagged_in_function_tags_and_bare() {
    check(
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
        "",
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    check(
        "Checking.<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}; {\"name\": \"list_dir\", \"parameters\": {}} then more",
        "Checking. then more",
        &[call("read_file", json!({"path": "a"})), call("list_dir", json!({}))],
    );
    check(
        "<function=read_file>{\"path\": \"b.rs\"}</function> and <function=list_dir>{}</function>",
        " and ",
        &[call("read_file", json!({"path": "b.rs"})), call("list_dir", json!({}))],
    );
    // Bare JSON: the whole reply, several calls, the typed form.
    check(
        "  {\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}\n",
        "",
        &[call("read_file", json!({"path": "a"}))],
    );
    check(
        "{\"type\": \"function\", \"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}};\n{\"name\": \"list_dir\", \"arguments\": {}}",
        "",
        &[call("read_file", json!({"path": "a"})), call("list_dir", json!({}))],
    );
    // Llama's built-in tools write Python, not JSON: that is text.
    let builtin = "<|python_tag|>brave_search.call(query=\"weather\")";
    check(builtin, builtin, &[]);
}

#[test]
fn bare_json_is_a_call_only_when_it_is_all_calls_to_known_tools() {
    for reply in [
        "{\"name\": \"delete_everything\", \"parameters\": {}}",
        "{\"name\": \"Ada\", \"age\": 36}",
        "{\"name\": \"read_file\", \"age\": 36, \"parameters\": {}}",
        "{\"name\": \"read_file\"}",
        "{\"result\": 42}\n",
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}} is how you would call it.",
        "[{\"name\": \"read_file\", \"parameters\": {}}]",
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"",
    ] {
        check(reply, reply, &[]);
    }
}

#[test]
fn prose_that_merely_starts_with_a_brace_is_let_go_at_once() {
    let mut extractor = CallExtractor::new(names());
    assert_eq!(extractor.push("{"), []);
    assert_eq!(extractor.push("¡ hello"), [Piece::Text("{¡ hello".into())]);
    assert_eq!(extractor.push(" there"), [Piece::Text(" there".into())]);
    // Valid JSON so far may still be a call: held until it closes.
    let mut extractor = CallExtractor::new(names());
    assert_eq!(extractor.push("{\"answer\": "), []);
    assert_eq!(extractor.push("42} done"), [Piece::Text("{\"answer\": 42} done".into())]);
}

#[test]
fn mistral_calls_in_both_forms() {
    check(
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"list_dir\", \"arguments\": {}, \"id\": \"abcdefghi\"}]",
        "",
        &[call("read_file", json!({"path": "a"})), call("list_dir", json!({}))],
    );
    check(
        "Sure.[TOOL_CALLS]read_file[ARGS]{\"path\": \"a\"}[TOOL_CALLS]list_dir[CALL_ID]a1B2c3D4e[ARGS]{}",
        "Sure.",
        &[call("read_file", json!({"path": "a"})), call("list_dir", json!({}))],
    );
    check(
        "[TOOL_CALLS]get_weather[ARGS] {\"city\": \"Oslo\"} It is cold.",
        " It is cold.",
        &[call("get_weather", json!({"city": "Oslo"}))],
    );
}

#[test]
fn malformed_blocks_are_given_back_as_text() {
    for reply in [
        "<tool_call>\n{not json}\n</tool_call>\nafter",
        "<tool_call>{\"arguments\": {}}</tool_call>",
        "Models write <tool_call> tags; [TOOL_CALLS] is Mistral's token.",
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"",
        "<function=read_file>(path)</function>",
        "<function=read file>{}</function>",
        "<tool_call><function=read_file>\n<parameter=path>\na\n</parameter>\ngarbage</function>",
        "[TOOL_CALLS][]",
        "[TOOL_CALLS]read_file{\"path\": 1}",
        "[TOOL_CALLS]read_file[ARGS][1, 2]",
        "<|python_tag|>{\"name\": 3}",
        "unfinished <tool_c",
        "<tool_call>",
    ] {
        check(reply, reply, &[]);
    }
    // A broken block next to a good one: only the good one is a call.
    check(
        "<tool_call>{oops}</tool_call><tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call>",
        "<tool_call>{oops}</tool_call>",
        &[call("list_dir", json!({}))],
    );
}

#[test]
fn unicode_prose_and_arguments_survive_any_split() {
    check(
        "Voilà — ça marche 🎉<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"日本語 ✓\"}}</tool_call>fin ✓",
        "Voilà — ça marche 🎉fin ✓",
        &[call("write_file", json!({"content": "日本語 ✓"}))],
    );
}

/// Bytes looked at when `reply` comes in 4-byte deltas.
fn work_in_tiny_deltas(reply: &str) -> (usize, (String, Vec<(String, Value)>)) {
    let mut extractor = CallExtractor::new(names());
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < reply.len() {
        let mut end = (start + 4).min(reply.len());
        while !reply.is_char_boundary(end) {
            end += 1;
        }
        pieces.extend(extractor.push(&reply[start..end]));
        start = end;
    }
    pieces.extend(extractor.finish());
    (extractor.work(), join(pieces))
}

#[test]
fn large_calls_streamed_in_tiny_deltas_are_read_in_linear_work() {
    let mut content = String::new();
    while content.len() < 300_000 {
        content.push_str("## Part\n<b>`code`</b> and \"quotes\" \\ [x] {y} <tool_c here.\n");
    }
    let arguments = json!({"path": "README.md", "content": content});
    let hermes = format!(
        "Writing.\n<tool_call>\n{}\n</tool_call>\nDone.",
        json!({"name": "write_file", "arguments": arguments})
    );
    let bare = json!({"name": "write_file", "parameters": arguments}).to_string();
    let mistral = format!("[TOOL_CALLS]write_file[ARGS]{arguments}");
    let xml = format!(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nREADME.md\n</parameter>\n<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    );
    let broken =
        format!("<tool_call>{{\"name\": \"write_file\", \"arguments\": {{\"content\": {content}");
    for (reply, text) in [
        (&hermes, "Writing.\n\nDone."),
        (&bare, ""),
        (&mistral, ""),
        (&xml, ""),
        (&broken, broken.as_str()),
        (&content, content.as_str()),
    ] {
        let (work, (got_text, calls)) = work_in_tiny_deltas(reply);
        assert_eq!(got_text, text);
        if text.is_empty() || text.starts_with("Writing") {
            assert_eq!(calls, [call("write_file", arguments.clone())]);
        }
        assert!(work <= 8 * reply.len(), "looked at {work} bytes for a reply of {}", reply.len());
    }
}

fn events(items: Vec<Result<ProviderEvent, LlmError>>) -> crate::EventStream {
    Box::pin(futures_util::stream::iter(items))
}

async fn collect(stream: crate::EventStream) -> Vec<Result<ProviderEvent, String>> {
    stream.map(|item| item.map_err(|e| e.to_string())).collect().await
}

#[tokio::test]
async fn text_calls_become_call_events_after_native_ones() {
    use ProviderEvent::*;
    let stream = events(vec![
        Ok(TextDelta("Reading.<tool_".into())),
        Ok(Usage(axon_protocol::Usage::default())),
        Ok(TextDelta(
            "call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>".into(),
        )),
        Ok(ToolCallStart { index: 0, id: "n0".into(), name: "list_dir".into() }),
        Ok(ToolCallDelta { index: 0, arguments: "{}".into() }),
        Ok(TextDelta(" ok".into())),
        Ok(ToolCallEnd { index: 0 }),
        Ok(Finish(FinishReason::Stop)),
    ]);
    let got = collect(with_text_calls(stream, names())).await;
    assert_eq!(
        got,
        [
            Ok(TextDelta("Reading.".into())),
            Ok(TextHeld("<tool_".into())),
            Ok(Usage(axon_protocol::Usage::default())),
            Ok(HeldTextSettled),
            Ok(ToolCallStart { index: 0, id: "n0".into(), name: "list_dir".into() }),
            Ok(ToolCallDelta { index: 0, arguments: "{}".into() }),
            Ok(TextDelta(" ok".into())),
            Ok(ToolCallEnd { index: 0 }),
            Ok(ToolCallStart { index: 1, id: "call_text_0".into(), name: "read_file".into() }),
            Ok(ToolCallDelta { index: 1, arguments: "{\"path\":\"a\"}".into() }),
            Ok(ToolCallEnd { index: 1 }),
            Ok(Finish(FinishReason::ToolCalls)),
        ]
    );
}

#[tokio::test]
async fn a_leaked_copy_of_a_native_call_is_dropped_and_plain_text_passes() {
    use ProviderEvent::*;
    let leaked =
        "<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}</tool_call>";
    let stream = events(vec![
        Ok(TextDelta(leaked.into())),
        Ok(ToolCallStart { index: 0, id: "n0".into(), name: "list_dir".into() }),
        Ok(ToolCallDelta { index: 0, arguments: "{\"path\": \".\"}".into() }),
        Ok(Finish(FinishReason::ToolCalls)),
    ]);
    let got = collect(with_text_calls(stream, names())).await;
    assert_eq!(
        got,
        [
            Ok(ToolCallStart { index: 0, id: "n0".into(), name: "list_dir".into() }),
            Ok(ToolCallDelta { index: 0, arguments: "{\"path\": \".\"}".into() }),
            Ok(Finish(FinishReason::ToolCalls)),
        ]
    );
    let plain = vec![
        Ok(ReasoningDelta("hmm".into())),
        Ok(TextDelta("{\"answer\": 42} is JSON, <b>bold</b> is not [".into())),
        Ok(Finish(FinishReason::Stop)),
    ];
    let got = collect(with_text_calls(events(plain), names())).await;
    assert_eq!(
        got,
        [
            Ok(ReasoningDelta("hmm".into())),
            Ok(TextDelta("{\"answer\": 42} is JSON, <b>bold</b> is not ".into())),
            // Held back while it might have begun `[TOOL_CALLS]`.
            Ok(TextHeld("[".into())),
            Ok(TextDelta("[".into())),
            Ok(HeldTextSettled),
            Ok(Finish(FinishReason::Stop)),
        ]
    );
}

#[tokio::test]
async fn held_back_text_comes_out_before_an_error() {
    use ProviderEvent::*;
    let stream = events(vec![
        Ok(TextDelta("cut <tool_call>{\"name\": \"read_".into())),
        Err(LlmError::Stream { provider: "test".into(), message: "the connection dropped".into() }),
    ]);
    let got = collect(with_text_calls(stream, names())).await;
    let held = "<tool_call>{\"name\": \"read_";
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(got[0], Ok(TextDelta("cut ".into())));
    assert_eq!(got[1], Ok(TextHeld(held.into())));
    assert_eq!(got[2], Ok(TextDelta(held.into())));
    assert_eq!(got[3], Ok(HeldTextSettled));
    assert!(got[4].is_err());
}

/// The events of a stream that never ends after `deltas`, as far as they go.
async fn events_before_a_stall(deltas: &[&str]) -> Vec<ProviderEvent> {
    let items: Vec<_> =
        deltas.iter().map(|d| Ok(ProviderEvent::TextDelta((*d).to_string()))).collect();
    let stalled = futures_util::stream::iter(items).chain(futures_util::stream::pending());
    let mut stream = with_text_calls(Box::pin(stalled), names());
    let mut got = Vec::new();
    while let Some(Some(Ok(event))) = stream.next().now_or_never() {
        got.push(event);
    }
    got
}

#[tokio::test]
async fn text_held_back_is_announced_so_a_cancelled_turn_keeps_it() {
    for (deltas, given) in [
        (&["Sure: ", "["][..], "Sure: "),
        (&["{\"na", "me\": \"read_file\""][..], ""),
        (&["Reading <tool", "_call>{\"name\""][..], "Reading "),
    ] {
        let mut turn = crate::TurnAssembler::new();
        for event in events_before_a_stall(deltas).await {
            turn.push(&event);
        }
        assert_eq!(turn.text(), given, "{deltas:?}");
        assert_eq!(turn.received_text(), deltas.concat(), "{deltas:?}");
    }
}

/// A reply fed to [`with_text_calls`] one piece at a time, as a server
/// sends it: `push` gives the events known after that piece.
struct Fed {
    queue: std::sync::Arc<std::sync::Mutex<(std::collections::VecDeque<String>, bool)>>,
    stream: crate::EventStream,
}

impl Fed {
    fn new() -> Self {
        let queue =
            std::sync::Arc::new(std::sync::Mutex::new((std::collections::VecDeque::new(), false)));
        let source = std::sync::Arc::clone(&queue);
        let inner = futures_util::stream::poll_fn(move |_| {
            let mut guard = source.lock().unwrap();
            match guard.0.pop_front() {
                Some(text) => std::task::Poll::Ready(Some(Ok(ProviderEvent::TextDelta(text)))),
                None if guard.1 => std::task::Poll::Ready(None),
                None => std::task::Poll::Pending,
            }
        });
        Fed { queue, stream: with_text_calls(Box::pin(inner), names()) }
    }

    fn drain(&mut self) -> Vec<ProviderEvent> {
        let mut got = Vec::new();
        while let Some(Some(Ok(event))) = self.stream.next().now_or_never() {
            got.push(event);
        }
        got
    }

    fn push(&mut self, piece: &str) -> Vec<ProviderEvent> {
        self.queue.lock().unwrap().0.push_back(piece.to_string());
        self.drain()
    }

    fn finish(&mut self) -> Vec<ProviderEvent> {
        self.queue.lock().unwrap().1 = true;
        self.drain()
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 200, failure_persistence: None, ..Default::default() })]

    /// However a reply that holds no call is split, after every piece the
    /// text received so far (given out and held back) is exactly what was
    /// sent, and at the end all of it has been given out. (No quote in the
    /// alphabet, so nothing in it can be a call's JSON.)
    #[test]
    fn held_and_given_text_add_up_to_what_was_received(
        pieces in proptest::collection::vec("[\\[\\]{}<>`a-zA-Z_ :\n]{0,12}", 1..12),
    ) {
        let mut turn = crate::TurnAssembler::new();
        let mut fed = Fed::new();
        let mut sent = String::new();
        for piece in &pieces {
            sent.push_str(piece);
            for event in fed.push(piece) {
                turn.push(&event);
            }
            proptest::prop_assert_eq!(turn.received_text(), sent.clone());
        }
        for event in fed.finish() {
            turn.push(&event);
        }
        proptest::prop_assert_eq!(turn.received_text(), sent.clone());
        let finished = turn.finish();
        proptest::prop_assert!(finished.message.tool_calls.is_empty());
        proptest::prop_assert_eq!(finished.message.text(), sent);
    }
}
