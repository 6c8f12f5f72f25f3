//! Reasoning streams against aimock (npm `@copilotkit/aimock`, pinned in
//! tests/peers/): DeepSeek-style `reasoning_content` in chat completions and
//! Anthropic thinking blocks with signatures, through a full tool round.
//! aimock runs with `--strict`, so an Anthropic follow-up that drops the
//! signed thinking block is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use crate::common::peers::{Peer, peer_path};
use crate::common::{agent_on, fast_retries, run_collecting};
use axon_core::{AgentConfig, RunOutcome};
use axon_llm::{ProviderKind, ToolProtocol, preset};
use axon_protocol::{AgentEvent, ContentPart, Role};
use serde_json::json;

fn aimock(fixtures: &std::path::Path) -> Peer {
    let mut command = Command::new("node");
    command
        .arg(peer_path("node_modules/@copilotkit/aimock/dist/cli.js"))
        .args(["-h", "127.0.0.1", "-p", "0", "--strict", "--validate-on-load", "-f"])
        .arg(fixtures);
    Peer::start(command, false, "listening on ")
}

fn fixtures(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("aimock.json");
    let body = json!({"fixtures": [
        {"match": {"userMessage": "weather", "hasToolResult": false},
         "response": {"reasoning": "The user wants the weather; read the file.",
                      "reasoningSignature": "sig-weather",
                      "toolCalls": [{"id": "call_w1", "name": "read_file", "arguments": {"path": "weather.txt"}}]}},
        {"match": {"userMessage": "weather", "hasToolResult": true},
         "response": {"reasoning": "The file says sunny.", "reasoningSignature": "sig-answer",
                      "content": "It is sunny in Paris."}},
    ]});
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_and_thinking_streams_survive_a_tool_round() {
    let scratch = tempfile::tempdir().unwrap();
    let peer = aimock(&fixtures(scratch.path()));
    for (kind, model) in [
        (ProviderKind::OpenAi, "deepseek-reasoner"),
        (ProviderKind::Anthropic, "claude-sonnet-4-5"),
    ] {
        let mut provider =
            preset(if kind == ProviderKind::Anthropic { "anthropic" } else { "deepseek" }).unwrap();
        provider.base_url = match kind {
            ProviderKind::OpenAi => format!("{}/v1", peer.url),
            ProviderKind::Anthropic => peer.url.clone(),
            ProviderKind::Local => unreachable!("aimock serves HTTP APIs"),
        };
        provider.model = model.into();
        provider.api_key = Some("test".into());
        provider.tool_protocol = ToolProtocol::Native;
        provider.retry = fast_retries();
        provider.stream_idle_timeout = Duration::from_secs(5);
        provider.thinking_budget = Some(2048);
        let (mut agent, dir) = agent_on(provider, AgentConfig::default());
        std::fs::write(dir.path().join("weather.txt"), "sunny\n").unwrap();

        let (outcome, events) = tokio::time::timeout(
            Duration::from_secs(60),
            run_collecting(&mut agent, "What is the weather?"),
        )
        .await
        .expect("the run hung");
        assert_eq!(outcome, RunOutcome::Answered("It is sunny in Paris.".into()), "{kind:?}");

        let thoughts: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Thought { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            thoughts, "The user wants the weather; read the file.The file says sunny.",
            "{kind:?}"
        );
        let result = agent.history().iter().find(|m| m.role == Role::Tool).unwrap();
        assert_eq!(result.text(), "1 | sunny", "{kind:?}");
        // Thinking is kept with its signature (Anthropic needs it back).
        let first_reply = agent.history().iter().find(|m| !m.tool_calls.is_empty()).unwrap();
        let signature = first_reply.content.iter().find_map(|p| match p {
            ContentPart::Thinking { signature, .. } => signature.clone(),
            _ => None,
        });
        if kind == ProviderKind::Anthropic {
            assert_eq!(signature.as_deref(), Some("sig-weather"));
        }
    }
}
