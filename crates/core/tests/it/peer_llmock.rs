//! The fault suite against llmock (PyPI, pinned in tests/peers/), a
//! third-party chaos server for LLM clients, scripted over its HTTP API.
//! Every fault must end in recovery or a clean error — never a panic or a
//! hang — and llmock's own resilience verdict must pass (in particular it
//! must not find that a Retry-After was ignored).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use crate::common::peers::{Peer, http, peer_path};
use crate::common::{agent_on, fast_retries, run_collecting};
use axon_core::{AgentConfig, RunOutcome};
use axon_llm::{ProviderConfig, ProviderKind, ToolProtocol, preset};
use axon_protocol::Role;
use serde_json::{Value, json};

fn llmock() -> Peer {
    let mut command = Command::new(peer_path(".venv/bin/llmock"));
    command
        .args(["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "info"])
        .args(["--tool-mode", "off", "--response-style", "static"])
        .env("NO_COLOR", "1");
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("LLMOCK_")) {
        command.env_remove(name);
    }
    Peer::start(command, true, "Uvicorn running on ")
}

fn provider(peer: &Peer, kind: ProviderKind) -> ProviderConfig {
    let mut config = match kind {
        ProviderKind::OpenAi => preset("openai").unwrap(),
        ProviderKind::Anthropic => preset("anthropic").unwrap(),
        ProviderKind::Local => unreachable!("llmock serves HTTP APIs"),
    };
    config.base_url = match kind {
        ProviderKind::OpenAi => format!("{}/v1", peer.url),
        ProviderKind::Anthropic => format!("{}/anthropic", peer.url),
        ProviderKind::Local => unreachable!("llmock serves HTTP APIs"),
    };
    config.model = match kind {
        ProviderKind::OpenAi => "gpt-4o-mini".into(),
        ProviderKind::Anthropic => "claude-sonnet-4-6".into(),
        ProviderKind::Local => unreachable!("llmock serves HTTP APIs"),
    };
    config.api_key = Some("test".into());
    config.tool_protocol = ToolProtocol::Native;
    config.retry = fast_retries();
    // The stall scenario holds for 30 s; 5 s finds it, and a busy machine's
    // slow first byte from the peer is not taken for one.
    config.stream_idle_timeout = Duration::from_secs(5);
    config
}

async fn control(client: &reqwest::Client, peer: &Peer, path: &str, body: Option<Value>) -> Value {
    let url = format!("{}{path}", peer.url);
    let request = match body {
        Some(body) => {
            client.post(url).header("content-type", "application/json").body(body.to_string())
        }
        None => client.get(url),
    };
    let response = request.send().await.expect("llmock control API");
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// What a scenario must end in.
enum Expect {
    /// Recovered: the model's (static) answer.
    Answer,
    /// Recovered after a bad tool call, whose result told the model why.
    ToolError(&'static str),
}

fn scenarios() -> Vec<(&'static str, ProviderKind, Value, Expect)> {
    use ProviderKind::{Anthropic, OpenAi};
    let chat = json!({"path": "/v1/chat/completions"});
    let tool_reply = json!({"type": "reply", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]});
    vec![
        (
            "429 with Retry-After",
            OpenAi,
            json!([{"type": "fail", "status": 429, "retry_after": 1.5, "match": chat}]),
            Expect::Answer,
        ),
        ("500", OpenAi, json!([{"type": "fail", "status": 500, "match": chat}]), Expect::Answer),
        ("503", OpenAi, json!([{"type": "fail", "status": 503, "match": chat}]), Expect::Answer),
        (
            "529 overloaded",
            Anthropic,
            json!([{"type": "fail", "status": 529, "match": {"provider": "anthropic"}}]),
            Expect::Answer,
        ),
        (
            "corrupted chunk",
            OpenAi,
            json!([{"type": "stream_fault", "kind": "malformed", "after_chunks": 2}]),
            Expect::Answer,
        ),
        (
            "corrupted chunk",
            Anthropic,
            json!([{"type": "stream_fault", "kind": "malformed", "after_chunks": 3}]),
            Expect::Answer,
        ),
        (
            "stall",
            OpenAi,
            json!([{"type": "stream_fault", "kind": "stall", "after_chunks": 2, "stall_seconds": 30}]),
            Expect::Answer,
        ),
        (
            "truncated stream",
            OpenAi,
            json!([{"type": "stream_fault", "kind": "truncate", "after_chunks": 3}]),
            Expect::Answer,
        ),
        (
            "truncated stream",
            Anthropic,
            json!([{"type": "stream_fault", "kind": "truncate", "after_chunks": 4}]),
            Expect::Answer,
        ),
        (
            "disconnect",
            OpenAi,
            json!([{"type": "stream_fault", "kind": "disconnect", "after_chunks": 3}]),
            Expect::Answer,
        ),
        (
            "disconnect",
            Anthropic,
            json!([{"type": "stream_fault", "kind": "disconnect", "after_chunks": 3}]),
            Expect::Answer,
        ),
        (
            "malformed tool arguments",
            OpenAi,
            json!([tool_reply, {"type": "tool_fault", "kind": "malformed_arguments"}]),
            Expect::ToolError("Invalid parameters for read_file"),
        ),
        (
            "malformed tool arguments",
            Anthropic,
            json!([tool_reply, {"type": "tool_fault", "kind": "malformed_arguments"}]),
            Expect::ToolError("Invalid parameters for read_file"),
        ),
        (
            "unknown tool",
            OpenAi,
            json!([tool_reply, {"type": "tool_fault", "kind": "unknown_tool"}]),
            Expect::ToolError("Tool 'llmock_unknown_tool' is not available"),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_llmock_fault_ends_in_recovery_and_a_passing_verdict() {
    let peer = llmock();
    let client = http();
    for (name, kind, behaviors, expect) in scenarios() {
        control(&client, &peer, "/_llmock/reset", Some(json!({}))).await;
        control(&client, &peer, "/_llmock/scenario", Some(json!({"behaviors": behaviors}))).await;
        let (mut agent, _dir) = agent_on(provider(&peer, kind), AgentConfig::default());
        let run = run_collecting(&mut agent, "Say hello.");
        let (outcome, _events) = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .unwrap_or_else(|_| panic!("{name} ({kind:?}): the run hung"));
        let RunOutcome::Answered(answer) = &outcome else {
            panic!("{name} ({kind:?}): expected recovery, got {outcome:?}");
        };
        assert!(answer.starts_with("Mock response from"), "{name} ({kind:?}): {answer}");
        // llmock counts HTTP and stream faults in its verdict; a tool fault
        // shows in what the model was told instead.
        let injected_here = match expect {
            Expect::ToolError(expected) => {
                let result = agent.history().iter().find(|m| m.role == Role::Tool).unwrap();
                assert!(
                    result.is_error && result.text().starts_with(expected),
                    "{name}: {}",
                    result.text()
                );
                true
            }
            Expect::Answer => false,
        };
        let verdict = control(&client, &peer, "/_llmock/verdict", None).await;
        let codes: Vec<&str> = verdict["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["code"].as_str())
            .collect();
        assert!(!codes.contains(&"retry_after_ignored"), "{name} ({kind:?}): {verdict}");
        assert_eq!(verdict["passed"], true, "{name} ({kind:?}): {verdict}");
        let counted = verdict["faults_injected"].as_u64().unwrap_or(0) >= 1;
        assert!(counted || injected_here, "{name}: no fault was injected: {verdict}");
    }
}

/// A fault that never clears ends in a clean error, not a retry storm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_that_never_clears_ends_in_a_clean_error() {
    let peer = llmock();
    let client = http();
    let behaviors = json!([{"type": "fail", "status": 500, "times": null, "match": {"path": "/v1/chat/completions"}}]);
    control(&client, &peer, "/_llmock/scenario", Some(json!({"behaviors": behaviors}))).await;
    let (mut agent, _dir) = agent_on(provider(&peer, ProviderKind::OpenAi), AgentConfig::default());
    let (outcome, _) =
        tokio::time::timeout(Duration::from_secs(60), run_collecting(&mut agent, "hi"))
            .await
            .expect("the run hung");
    let RunOutcome::Failed(message) = outcome else {
        panic!("expected a failure, got {outcome:?}")
    };
    assert!(message.contains("HTTP 500"), "{message}");
    let verdict = control(&client, &peer, "/_llmock/verdict", None).await;
    let codes = verdict["findings"].to_string();
    assert!(!codes.contains("retry_storm"), "{verdict}");
}

/// A fallback list of providers already built (the runtime connects them
/// from the config by name; `runtime`'s tests cover that part).
struct Built(Vec<std::sync::Arc<dyn axon_llm::Provider>>);

impl axon_core::Fallbacks for Built {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn name(&self, index: usize) -> String {
        self.0[index].info().name.clone()
    }
    fn connect(&self, index: usize) -> axon_core::Connecting<'_> {
        let provider = std::sync::Arc::clone(&self.0[index]);
        Box::pin(async move { Ok(provider) })
    }
}

/// Records which provider the session says answered.
#[derive(Default)]
struct Models(std::sync::Mutex<Vec<String>>);

impl axon_core::Journal for Models {
    fn message(&self, _: &axon_protocol::Message, _: u64) {}
    fn usage(&self, _: &axon_protocol::Usage) {}
    fn compacted(&self, _: &str, _: Option<&str>, _: usize) {}
    fn model_changed(&self, provider: &str, model: &str) {
        self.0.lock().unwrap().push(format!("{provider}/{model}"));
    }
}

/// Issue 36 §4: llmock's provider is down (every request fails, in each
/// wire format); the request continues on the scripted model of the
/// fallback list, the user is told, the session records the switch, and
/// the next request goes to the first provider again, which answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_down_hands_the_request_to_the_fallback_and_takes_the_next_back() {
    use axon_testkit::{Reply, ScriptedServer};
    let peer = llmock();
    let client = http();
    for (kind, status) in [(ProviderKind::OpenAi, 503), (ProviderKind::Anthropic, 529)] {
        control(&client, &peer, "/_llmock/reset", Some(json!({}))).await;
        let outage = json!([{"type": "fail", "status": status, "times": null}]);
        control(&client, &peer, "/_llmock/scenario", Some(json!({"behaviors": outage}))).await;
        let backup =
            ScriptedServer::start(vec![Reply::text("answered by the backup")]).await.unwrap();
        let mut backup_config = crate::common::provider_config(&backup, kind, ToolProtocol::Native);
        backup_config.name = "backup".into();
        backup_config.model = "backup-model".into();
        let fallback = axon_llm::build_provider(&backup_config).unwrap();
        let (agent, _dir) = agent_on(provider(&peer, kind), AgentConfig::default());
        let models = std::sync::Arc::new(Models::default());
        let mut agent = agent
            .with_fallbacks(std::sync::Arc::new(Built(vec![fallback])))
            .with_journal(models.clone());

        let run = run_collecting(&mut agent, "Say hello.");
        let (outcome, events) = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .unwrap_or_else(|_| panic!("{kind:?}: the run hung"));
        assert!(
            matches!(&outcome, RunOutcome::Answered(a) if a == "answered by the backup"),
            "{kind:?}: {outcome:?}"
        );
        let told = events.iter().any(|e| {
            matches!(e, axon_protocol::AgentEvent::Warning { message }
                if message.contains("continues on backup (backup-model)"))
        });
        assert!(told, "{kind:?}: the user is told: {events:?}");
        assert!(
            events.iter().any(|e| matches!(e, axon_protocol::AgentEvent::ModelChanged { provider, .. } if provider == "backup")),
            "{kind:?}: {events:?}"
        );
        assert_eq!(*models.0.lock().unwrap(), ["backup/backup-model"], "{kind:?}");

        // The outage is over: the next request goes to llmock again.
        control(&client, &peer, "/_llmock/reset", Some(json!({}))).await;
        let (outcome, events) = run_collecting(&mut agent, "And again.").await;
        assert!(
            matches!(&outcome, RunOutcome::Answered(a) if a.starts_with("Mock response from")),
            "{kind:?}: {outcome:?}"
        );
        assert!(
            events.iter().any(|e| matches!(e, axon_protocol::AgentEvent::ModelChanged { provider, .. } if provider != "backup")),
            "{kind:?}: back to the first: {events:?}"
        );
        assert_eq!(models.0.lock().unwrap().len(), 2, "{kind:?}: the return is recorded");
        assert_eq!(backup.remaining(), 0, "{kind:?}");
    }
}

/// A failure the user must fix (a refused key) does not fall back: the next
/// provider would be asked with the same mistake in the same turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_does_not_fall_back() {
    use axon_testkit::{Reply, ScriptedServer};
    let peer = llmock();
    let client = http();
    control(&client, &peer, "/_llmock/reset", Some(json!({}))).await;
    let refused = json!([{"type": "fail", "status": 401, "times": null}]);
    control(&client, &peer, "/_llmock/scenario", Some(json!({"behaviors": refused}))).await;
    let backup = ScriptedServer::start(vec![Reply::text("never")]).await.unwrap();
    let mut backup_config =
        crate::common::provider_config(&backup, ProviderKind::OpenAi, ToolProtocol::Native);
    backup_config.name = "backup".into();
    let fallback = axon_llm::build_provider(&backup_config).unwrap();
    let (agent, _dir) = agent_on(provider(&peer, ProviderKind::OpenAi), AgentConfig::default());
    let mut agent = agent.with_fallbacks(std::sync::Arc::new(Built(vec![fallback])));
    let (outcome, _) = run_collecting(&mut agent, "Say hello.").await;
    assert!(matches!(outcome, RunOutcome::Failed(_)), "{outcome:?}");
    assert_eq!(backup.remaining(), 1, "the backup was never asked");
}
