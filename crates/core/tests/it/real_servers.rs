//! What running against real model servers (llama.cpp's llama-server,
//! vLLM, Ollama, LM Studio, OpenRouter) showed, against the scripted server
//! answering as they do: their context overflows trim and retry, their
//! windows are asked for, requests carry an output limit, an Anthropic
//! `base_url` may end in `/v1`, unreadable text-protocol blocks are
//! warnings, and a failed request asked again is not repeated.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::common::{Harness, agent_on, provider_config, run_collecting};
use axon_core::{AgentConfig, Journal, RunOutcome};
use axon_llm::{ProviderKind, ToolProtocol, build_provider, connect};
use axon_protocol::{AgentEvent, Message, Role, Usage};
use axon_testkit::{ModelInfo, Reply, ScriptedServer};
use axon_tools::Profile;
use serde_json::Value;

const LLAMA_CPP_OVERFLOW: &str = r#"{"error":{"code":400,"message":"request (4113 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4113,"n_ctx":4096}}"#;

#[tokio::test]
async fn a_llama_cpp_context_overflow_trims_half_and_the_run_succeeds() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let script = vec![
            Reply::text("first answer"),
            Reply::text("second answer"),
            Reply::error(400, LLAMA_CPP_OVERFLOW),
            Reply::text("fits now"),
        ];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        assert!(matches!(h.run("one").await, RunOutcome::Answered(_)));
        assert!(matches!(h.run("two").await, RunOutcome::Answered(_)));
        assert_eq!(h.run("three").await, RunOutcome::Answered("fits now".into()), "{kind:?}");
        let warned = h.events().iter().any(
            |e| matches!(e, AgentEvent::Warning { message } if message.contains("context window")),
        );
        assert!(warned, "{kind:?}: {:?}", h.events());
        let requests = h.server.requests();
        let sent = |i: usize| requests[i]["messages"].as_array().unwrap().len();
        assert!(sent(3) < sent(2), "{kind:?}: the retry sends less");
        assert!(requests[3].to_string().contains("three"));
    }
}

/// A provider for `model` on `server`, in the OpenAI format.
fn local(server: &ScriptedServer, model: &str) -> axon_llm::ProviderConfig {
    let mut config = provider_config(server, ProviderKind::OpenAi, ToolProtocol::Native);
    config.model = model.into();
    config
}

#[tokio::test]
async fn an_unknown_models_window_is_asked_of_its_server_once() {
    // llama-server whose model list has only the training window: /props says.
    let server = ScriptedServer::start(vec![]).await.unwrap();
    server.set_model_info(ModelInfo::LlamaCpp { n_ctx: 4096, in_models: false });
    let provider = connect(&local(&server, "qwen2.5-coder-7b")).await.unwrap();
    assert_eq!(provider.info().context_window, 4096);
    assert_eq!(server.probes(), ["GET /v1/models", "GET /props"]);
    let again = connect(&local(&server, "qwen2.5-coder-7b")).await.unwrap();
    assert_eq!(again.info().context_window, 4096);
    assert_eq!(server.probes().len(), 2, "cached: {:?}", server.probes());

    // llama-server listing n_ctx in /v1/models, behind the Anthropic format.
    let server = ScriptedServer::start(vec![]).await.unwrap();
    server.set_model_info(ModelInfo::LlamaCpp { n_ctx: 8192, in_models: true });
    let mut config = provider_config(&server, ProviderKind::Anthropic, ToolProtocol::Native);
    config.model = "local".into();
    assert_eq!(connect(&config).await.unwrap().info().context_window, 8192);
    assert_eq!(server.probes(), ["GET /v1/models"]);

    // Ollama: num_ctx when the model sets one, else model_info.
    for (num_ctx, expected) in [(Some(16384), 16384), (None, 32768)] {
        let server = ScriptedServer::start(vec![]).await.unwrap();
        server.set_model_info(ModelInfo::Ollama { num_ctx, context_length: 32768 });
        let provider = connect(&local(&server, "llama3.1")).await.unwrap();
        assert_eq!(provider.info().context_window, expected);
        assert_eq!(server.probes().last().unwrap(), "POST /api/show");
    }

    // A server that says nothing leaves the default; a known model is not asked about.
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let provider = connect(&local(&server, "mystery")).await.unwrap();
    assert_eq!(provider.info().context_window, axon_llm::DEFAULT_CONTEXT_WINDOW);
    let provider = connect(&local(&server, "gpt-4.1")).await.unwrap();
    assert_eq!(provider.info().context_window, 1_047_576);
    let asked =
        ["GET /v1/models", "GET /props", "GET /api/v0/models", "GET /api/ps", "POST /api/show"];
    assert_eq!(server.probes(), asked, "asked once, and not about gpt-4.1");
    // Nor about other well-known models behind an OpenAI-compatible URL.
    let known = [
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("claude-sonnet-4-20250514", 200_000),
        ("claude-opus-4-1", 200_000),
        ("deepseek-chat", 128_000),
        ("deepseek-reasoner", 128_000),
    ];
    for (model, window) in known {
        let provider = connect(&local(&server, model)).await.unwrap();
        assert_eq!(provider.info().context_window, window, "{model}");
    }
    assert_eq!(server.probes(), asked, "no questions about well-known models");

    // A hosted API's model list that says nothing more ends the questions.
    let server = ScriptedServer::start(vec![]).await.unwrap();
    server.set_model_info(ModelInfo::Hosted);
    let provider = connect(&local(&server, "some-model")).await.unwrap();
    assert_eq!(provider.info().context_window, axon_llm::DEFAULT_CONTEXT_WINDOW);
    assert_eq!(server.probes(), ["GET /v1/models"]);
}

#[tokio::test]
async fn the_discovered_window_starts_the_trim_before_the_server_refuses() {
    let server = ScriptedServer::start(vec![Reply::text("ok")]).await.unwrap();
    server.set_model_info(ModelInfo::LlamaCpp { n_ctx: 1024, in_models: false });
    let provider = connect(&local(&server, "tiny")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = axon_tools::Workspace::new(dir.path()).unwrap();
    let history: Vec<Message> = (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("question {i}: {}", "words ".repeat(20))),
                Message::assistant(format!("answer {i}: {}", "words ".repeat(20))),
            ]
        })
        .collect();
    let mut agent = axon_core::Agent::new(
        provider,
        Arc::new(Profile::Code.registry()),
        axon_tools::ToolContext::new(workspace),
        AgentConfig::default(),
    )
    .with_history(history);
    let (outcome, events) = run_collecting(&mut agent, "latest").await;
    assert_eq!(outcome, RunOutcome::Answered("ok".into()));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Warning { message } if message.contains("80 %"))),
        "{events:?}"
    );
    let sent = server.requests()[0]["messages"].as_array().unwrap().len();
    assert!(sent < 40, "{sent} messages sent into a 1024-token window");
}

#[tokio::test]
async fn requests_carry_an_output_limit_in_both_formats() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let server = ScriptedServer::start(vec![Reply::text("a"), Reply::text("b")]).await.unwrap();
        let mut config = provider_config(&server, kind, ToolProtocol::Native);
        config.context_window = Some(4096);
        let (mut agent, _dir) = agent_on(config.clone(), AgentConfig::default());
        run_collecting(&mut agent, "hi").await;
        // A fifth of the window: what the 80 % trim leaves for the answer.
        assert_eq!(server.requests()[0]["max_tokens"], 819, "{kind:?}");
        config.max_tokens = Some(300);
        let (mut agent, _dir) = agent_on(config, AgentConfig::default());
        run_collecting(&mut agent, "hi").await;
        assert_eq!(server.requests()[1]["max_tokens"], 300, "{kind:?}");
    }
}

#[tokio::test]
async fn an_anthropic_base_url_may_end_in_v1_and_errors_name_the_url() {
    let server = ScriptedServer::start(vec![Reply::text("hello")]).await.unwrap();
    for base in [format!("{}/v1", server.url), format!("{}/v1/", server.url)] {
        server.push([Reply::text("hello")]);
        let mut config = provider_config(&server, ProviderKind::Anthropic, ToolProtocol::Native);
        config.base_url = base;
        let (mut agent, _dir) = agent_on(config, AgentConfig::default());
        let (outcome, _) = run_collecting(&mut agent, "hi").await;
        assert_eq!(outcome, RunOutcome::Answered("hello".into()));
    }
    assert!(server.paths().iter().all(|p| p == "/v1/messages"), "{:?}", server.paths());

    let server = ScriptedServer::start(vec![Reply::error(404, "Not Found")]).await.unwrap();
    let mut config = provider_config(&server, ProviderKind::Anthropic, ToolProtocol::Native);
    config.base_url = format!("{}/api", server.url);
    let (mut agent, _dir) = agent_on(config, AgentConfig::default());
    let (outcome, _) = run_collecting(&mut agent, "hi").await;
    let RunOutcome::Failed(message) = outcome else { panic!("{outcome:?}") };
    assert!(message.contains(&format!("{}/api/v1/messages", server.url)), "{message}");
    assert!(message.contains("base_url"), "{message}");
}

fn tokens(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Token { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_protocol_blocks_show_as_calls_and_unreadable_ones_as_warnings() {
    let block = "```json:tool\n{\"tool\": \"list_dir\", \"params\": {}}\n```";
    let script = vec![
        Reply::text("Checking.\n```json:tool\n{not json}\n```"),
        Reply::text(&format!("Listing.\n{block}\n")),
        Reply::text("Done."),
    ];
    let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Text, Profile::Code).await;
    assert_eq!(h.run("look around").await, RunOutcome::Answered("Done.".into()));
    let events = h.events();
    let warnings: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{events:?}");
    assert!(warnings[0].contains("block 1 could not be read (Invalid JSON"), "{}", warnings[0]);
    let shown = tokens(&events);
    assert!(!shown.contains("json:tool") && !shown.contains("{not json}"), "{shown:?}");
    assert_eq!(shown, "Checking.\nListing.\n\nDone.");
    let actions: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Action { call, .. } => Some(call.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(actions, ["list_dir"]);
    // The model still sees its own blocks and the error.
    let second = h.server.requests()[1].to_string();
    assert!(second.contains("{not json}") && second.contains("Invalid JSON"), "{second}");
}

#[derive(Default)]
struct Recorder {
    messages: Mutex<Vec<Message>>,
    failures: Mutex<Vec<String>>,
}

impl Journal for Recorder {
    fn message(&self, message: &Message, _tokens: u64) {
        self.messages.lock().unwrap().push(message.clone());
    }
    fn usage(&self, _usage: &Usage) {}
    fn compacted(&self, _summary: &str, _carried: Option<&str>, _kept: usize) {}
    fn turn_failed(&self, reason: &str) {
        self.failures.lock().unwrap().push(reason.to_string());
    }
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_failed_request_is_recorded_and_asking_again_does_not_repeat_it() {
    let script = vec![
        Reply::error(400, r#"{"error":{"message":"model is still loading"}}"#),
        Reply::text("the answer"),
        Reply::text("another"),
    ];
    let server = ScriptedServer::start(script).await.unwrap();
    let journal = Arc::new(Recorder::default());
    let config = provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native);
    let (agent, _dir) = agent_on(config, AgentConfig::default());
    let mut agent = agent.with_journal(journal.clone());
    let (outcome, _) = run_collecting(&mut agent, "what is 2+2?").await;
    assert!(matches!(outcome, RunOutcome::Failed(ref m) if m.contains("still loading")));
    assert_eq!(journal.failures.lock().unwrap().len(), 1);
    // `--continue` starts a new agent from the recorded messages.
    let recorded = journal.messages.lock().unwrap().clone();
    let provider =
        build_provider(&provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native))
            .unwrap();
    agent.set_provider(provider);
    agent.replace_history(recorded, Vec::new());
    let (outcome, _) = run_collecting(&mut agent, "what is 2+2?").await;
    assert_eq!(outcome, RunOutcome::Answered("the answer".into()));
    assert_eq!(user_texts(&server.requests()[1]), ["what is 2+2?"]);
    let users = journal.messages.lock().unwrap().iter().filter(|m| m.role == Role::User).count();
    assert_eq!(users, 1, "the prompt is recorded once");
    // A different question after a failure is a new message.
    let (outcome, _) = run_collecting(&mut agent, "and 3+3?").await;
    assert_eq!(outcome, RunOutcome::Answered("another".into()));
    assert_eq!(user_texts(&server.requests()[2]), ["what is 2+2?", "and 3+3?"]);
}

#[test]
fn max_tokens_defaults_follow_the_window() {
    let mut config = axon_llm::preset("ollama").unwrap();
    assert_eq!(axon_llm::default_max_tokens(&config, 4096), Some(819));
    assert_eq!(axon_llm::default_max_tokens(&config, 1_000_000), Some(axon_llm::MAX_TOKENS_CAP));
    config.max_tokens = Some(0);
    assert_eq!(axon_llm::default_max_tokens(&config, 4096), None, "0 sends none");
    let openai = axon_llm::preset("openai").unwrap();
    assert_eq!(axon_llm::default_max_tokens(&openai, 1_047_576), None);
    let mut anthropic = axon_llm::preset("anthropic").unwrap();
    anthropic.max_tokens = Some(0);
    assert_eq!(axon_llm::default_max_tokens(&anthropic, 200_000), Some(8192), "required there");
}
