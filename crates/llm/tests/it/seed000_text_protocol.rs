//! Seed 000 Correctness Properties of the ```json:tool parser.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_llm::text_protocol::{FENCE, TextToolCall, parse};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() }
}

/// JSON parameter objects of a few levels, with any strings in them.
fn params() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[^\u{0}]{0,30}".prop_map(Value::from),
        Just(Value::Null),
    ];
    let value = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z_]{1,10}", value, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn block(tool: &str, params: &Value) -> String {
    format!("{FENCE}\n{}\n```", json!({"tool": tool, "params": params}))
}

/// Prose that cannot be mistaken for a block.
fn prose() -> impl Strategy<Value = String> {
    "[^\u{0}`]{0,60}"
}

proptest! {
    #![proptest_config(config())]

    /// Property 12: Tool block parsing extracts correct data. *For any* valid
    /// JSON string wrapped in ```json:tool markers containing "tool" and
    /// "params" fields, the ToolParser should extract the exact tool name
    /// and parameters.
    #[test]
    fn seed000_prop12_tool_block_parsing_extracts_exact_data(
        tool in "[a-z_]{1,20}",
        params in params(),
        pretty in any::<bool>(),
    ) {
        let object = json!({"tool": tool, "params": params});
        let json = if pretty { serde_json::to_string_pretty(&object).unwrap() } else { object.to_string() };
        let parsed = parse(&format!("{FENCE}\n{json}\n```"));
        prop_assert_eq!(parsed.calls, vec![Ok(TextToolCall { tool, params })]);
    }

    /// Property 14: Malformed JSON handled gracefully. *For any* string
    /// wrapped in ```json:tool markers that is not valid JSON, the
    /// ToolParser should return an error result without throwing an
    /// exception.
    #[test]
    fn seed000_prop14_malformed_json_is_an_error_result(body in "[^\u{0}`]{0,80}") {
        prop_assume!(serde_json::from_str::<Value>(&body).is_err());
        let parsed = parse(&format!("before\n{FENCE}\n{body}\n```\nafter"));
        prop_assert_eq!(parsed.calls.len(), 1);
        let error = parsed.calls[0].clone().unwrap_err();
        prop_assert!(error.starts_with("Invalid JSON"), "{}", error);
        prop_assert!(parsed.text.contains("before") && parsed.text.contains("after"));
    }

    /// Property 16: Mixed response text extraction. *For any* AI response
    /// containing both plain text and json:tool blocks, the ToolParser
    /// should correctly separate text content from tool calls, preserving
    /// the text that appears before and between tool blocks.
    #[test]
    fn seed000_prop16_text_and_calls_are_separated(
        segments in prop::collection::vec((prose(), "[a-z_]{1,12}", params()), 1..5),
        tail in prose(),
    ) {
        let mut reply = String::new();
        let mut expected_text = String::new();
        let mut expected_calls = Vec::new();
        for (text, tool, params) in &segments {
            reply.push_str(text);
            reply.push_str(&block(tool, params));
            expected_text.push_str(text);
            expected_calls.push(Ok(TextToolCall { tool: tool.clone(), params: params.clone() }));
        }
        reply.push_str(&tail);
        expected_text.push_str(&tail);
        let parsed = parse(&reply);
        prop_assert_eq!(parsed.calls, expected_calls);
        prop_assert_eq!(parsed.text, expected_text.trim());
    }
}
