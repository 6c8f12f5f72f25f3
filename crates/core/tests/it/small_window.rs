//! Issue 31: a local model's 8k window spent a third of itself on the
//! system prompt and tool definitions before the first prompt. Below
//! `brief::SMALL_WINDOW` the tools go out brief; their cost is counted
//! here with the tokenizer (cl100k) on the request the model received.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::Harness;
use axon_core::AgentConfig;
use axon_core::tokens::TokenCounter;
use axon_testkit::Reply;
use serde_json::Value;

/// The tokens of the request's system prompt and tool definitions, and
/// the tools by name with their descriptions.
fn preamble(request: &Value) -> (u64, Vec<(String, String)>) {
    let counter = TokenCounter::for_model("local-model");
    counter.load();
    let system: String = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let mut tokens = counter.text(&system);
    let mut tools = Vec::new();
    for tool in request["tools"].as_array().unwrap() {
        tokens += counter.text(&tool["function"].to_string());
        let name = tool["function"]["name"].as_str().unwrap().to_string();
        tools.push((name, tool["function"]["description"].as_str().unwrap().to_string()));
    }
    (tokens, tools)
}

async fn first_request(window: u64) -> Value {
    let mut harness =
        Harness::with_window(vec![Reply::text("ok")], window, AgentConfig::default()).await;
    harness.run("hi").await;
    harness.server.requests()[0].clone()
}

#[tokio::test]
async fn an_8k_window_gets_the_code_tools_in_at_most_1150_tokens_a_large_one_in_full() {
    let (small, brief) = preamble(&first_request(8192).await);
    let (large, full) = preamble(&first_request(128_000).await);
    println!("system prompt and tools: {small} tokens at 8k, {large} at 128k");
    assert!(small <= 1_150, "{small} tokens of an 8192-token window before the first prompt");
    assert!(small * 100 <= large * 80, "brief {small} is not a cut from {large}");
    // The same tools but multi_edit and apply_patch (edit_file and
    // write_file do their work one change at a time) and the background
    // commands' tools, each description the start of the full one.
    let cut =
        |name: &str| ["multi_edit", "apply_patch", "shell_output", "shell_kill"].contains(&name);
    let full: Vec<_> = full.into_iter().filter(|(name, _)| !cut(name)).collect();
    assert!(!brief.iter().any(|(name, _)| cut(name)), "{brief:?}");
    assert_eq!(brief.len(), full.len());
    for ((name, short), (full_name, long)) in brief.iter().zip(&full) {
        assert_eq!(name, full_name);
        assert!(long.starts_with(short.as_str()) && !short.is_empty(), "{name}: {short}");
    }
    // From 16k on, nothing changes.
    let (at_16k, _) = preamble(&first_request(axon_core::brief::SMALL_WINDOW).await);
    assert_eq!(at_16k, large);
}
