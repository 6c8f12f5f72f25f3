//! Images in tool results on each wire (issue 35 §3): Anthropic puts them
//! in the `tool_result`'s content; chat completions, whose `tool` messages
//! take text only, sends them in one user message after the run of tool
//! results; a model without images is told in text instead, on both.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_llm::ProviderRequest;
use axon_protocol::{ContentPart, Message, ToolCall, ToolOutput};
use serde_json::json;

fn history() -> Vec<Message> {
    let mut assistant = Message::assistant("");
    assistant.tool_calls = ["a", "b", "c"]
        .iter()
        .map(|id| ToolCall { id: (*id).into(), name: "read_file".into(), arguments: json!({}) })
        .collect();
    let image = |line: &str, data: &str| ToolOutput {
        content: vec![
            ContentPart::text(line),
            ContentPart::Image { media_type: "image/png".into(), data: data.into() },
        ],
        is_error: false,
    };
    vec![
        Message::user("look"),
        assistant,
        Message::tool_result("a", image("Image 'a.png': PNG, 4x4, 60 bytes", "QUFB")),
        Message::tool_result("b", ToolOutput::text("1 | text")),
        Message::tool_result("c", image("Image 'c.png': PNG, 8x8, 70 bytes", "Q0ND")),
    ]
}

fn request(messages: &[Message]) -> ProviderRequest<'_> {
    ProviderRequest { messages, ..Default::default() }
}

#[test]
fn chat_completions_sends_the_images_in_a_user_message_after_the_tool_run() {
    let messages = history();
    let body = axon_llm::openai::request_body("gpt-4.1", &request(&messages));
    let wire = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = wire.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "tool", "user"]);
    assert_eq!(wire[2]["content"], "Image 'a.png': PNG, 4x4, 60 bytes");
    let parts = wire[5]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,QUFB");
    assert_eq!(parts[2]["image_url"]["url"], "data:image/png;base64,Q0ND");

    let body = axon_llm::openai::request_body("deepseek-chat", &request(&messages));
    let wire = body["messages"].as_array().unwrap();
    assert_eq!(wire.len(), 5, "no image message: {wire:?}");
    let text = wire[2]["content"].as_str().unwrap();
    assert!(text.contains("cannot see images"), "{text}");
    assert!(!body.to_string().contains("QUFB"));
}

#[test]
fn anthropic_sends_the_images_inside_the_tool_results() {
    let messages = history();
    let body = axon_llm::anthropic::request_body("claude-sonnet-4-5", &request(&messages), None);
    let wire = body["messages"].as_array().unwrap();
    assert_eq!(wire.len(), 3);
    let results = wire[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["type"], "tool_result");
    let content = results[0]["content"].as_array().unwrap();
    assert_eq!(content[0], json!({"type": "text", "text": "Image 'a.png': PNG, 4x4, 60 bytes"}));
    assert_eq!(content[1]["source"]["data"], "QUFB");
    assert_eq!(results[1]["content"], "1 | text");

    let body = axon_llm::anthropic::request_body("deepseek-chat", &request(&messages), None);
    let text = body["messages"][2]["content"][0]["content"].as_str().unwrap();
    assert!(text.contains("cannot see images"), "{text}");
}
