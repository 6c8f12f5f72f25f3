//! The JSON shapes of the shared types. Sessions on disk and every front end
//! depend on them, so a change here must be deliberate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_protocol::{AgentEvent, ContentPart, Message, Role, ToolCall, ToolOutput};
use proptest::prelude::*;
use serde_json::json;

#[test]
fn messages_serialise_compactly() {
    let user = Message::user("hi");
    assert_eq!(
        serde_json::to_value(&user).unwrap(),
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    );
    let result = Message::tool_result("call_1", ToolOutput::error("File not found: x"));
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"role": "tool", "content": [{"type": "text", "text": "File not found: x"}], "tool_call_id": "call_1", "is_error": true})
    );
}

#[test]
fn events_are_tagged_by_type() {
    let event = AgentEvent::Action {
        refused: false,
        preview: None,
        call: ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a"}),
        },
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"type": "action", "call": {"id": "c1", "name": "read_file", "arguments": {"path": "a"}}})
    );
    let back: AgentEvent = serde_json::from_value(json!({"type": "token", "text": "x"})).unwrap();
    assert_eq!(back, AgentEvent::Token { text: "x".into() });
}

#[test]
fn tool_output_text_joins_text_parts_only() {
    let output = ToolOutput {
        content: vec![
            ContentPart::text("a"),
            ContentPart::Image { media_type: "image/png".into(), data: "AAAA".into() },
            ContentPart::text("b"),
        ],
        is_error: false,
    };
    assert_eq!(output.text_content(), "a\nb");
}

fn content_part() -> impl Strategy<Value = ContentPart> {
    prop_oneof![
        any::<String>().prop_map(|text| ContentPart::Text { text }),
        (any::<String>(), any::<String>())
            .prop_map(|(media_type, data)| ContentPart::Image { media_type, data }),
        (any::<String>(), proptest::option::of(any::<String>()))
            .prop_map(|(text, signature)| ContentPart::Thinking { text, signature }),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (
        prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]),
        prop::collection::vec(content_part(), 0..4),
        prop::collection::vec(("[a-z0-9_]{1,8}", "[a-z_]{1,12}", any::<i64>()), 0..3),
        proptest::option::of("[a-z0-9_]{1,8}"),
        (any::<bool>(), any::<bool>()),
        proptest::option::of(any::<i64>()),
    )
        .prop_map(|(role, content, calls, tool_call_id, (is_error, refused), timestamp_ms)| {
            Message {
                role,
                content,
                tool_calls: calls
                    .into_iter()
                    .map(|(id, name, n)| ToolCall { id, name, arguments: json!({"n": n}) })
                    .collect(),
                tool_call_id,
                is_error,
                refused,
                timestamp_ms,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every message survives JSON and back unchanged.
    #[test]
    fn messages_round_trip_through_json(message in message()) {
        let text = serde_json::to_string(&message).unwrap();
        let back: Message = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, message);
    }
}

#[test]
fn a_rewind_op_reads_with_and_without_its_fields() {
    use axon_protocol::{Op, RewindScope};
    let full: Op = serde_json::from_str(r#"{"op":"rewind","turn":2,"scope":"files"}"#).unwrap();
    assert_eq!(full, Op::Rewind { turn: Some(2), scope: RewindScope::Files });
    let bare: Op = serde_json::from_str(r#"{"op":"rewind"}"#).unwrap();
    assert_eq!(bare, Op::Rewind { turn: None, scope: RewindScope::Both });
    assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"op":"rewind","scope":"both"}"#);
}
