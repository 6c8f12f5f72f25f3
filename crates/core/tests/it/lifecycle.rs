//! The agent obeys its `Lifecycle` (what hooks and checkpoints plug into):
//! a refused call gets an error result the model reads, a result carries a
//! hook's context, a refused prompt never reaches the model, a refused stop
//! keeps the model going once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::{Arc, Mutex};

use crate::common::Harness;
use axon_core::{AgentConfig, HookPermission, Lifecycle, LifecycleFuture, RunOutcome, Verdict};
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::{AgentEvent, ToolCall, ToolOutput, ToolSpec};
use axon_testkit::Reply;
use axon_tools::Profile;
use serde_json::json;

/// A GitHub token of the right shape (not a real one).
const PAT: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";

/// Refuses `shell`, adds context to every result, refuses prompts that
/// say "forbidden" and the first stop; records what it was shown.
#[derive(Default)]
struct Rules {
    seen: Mutex<Vec<String>>,
}

impl Lifecycle for Rules {
    fn prompt_submitted<'a>(&'a self, prompt: &'a str) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(format!("prompt {prompt}"));
            if prompt.contains("forbidden") {
                Verdict::blocked("no forbidden work")
            } else {
                // A hook that cats a file with a key in it.
                let context = format!("the user is on a train\nGITHUB_TOKEN={PAT}");
                Verdict { context: vec![context], ..Verdict::default() }
            }
        })
    }

    fn before_tool<'a>(&'a self, call: &'a ToolCall, _spec: &'a ToolSpec) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(format!("pre {}", call.name));
            match call.name.as_str() {
                "shell" => Verdict::blocked("shell is off on Fridays"),
                "write_file" => {
                    Verdict { permission: Some(HookPermission::Allow), ..Verdict::default() }
                }
                _ => Verdict::default(),
            }
        })
    }

    fn after_tool<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(format!("post {} {}", call.name, output.text_content()));
            Verdict {
                context: vec!["checked by the linter".into()],
                warnings: vec![format!("post hook saw {}", call.name)],
                ..Verdict::default()
            }
        })
    }

    fn stopping<'a>(&'a self, answer: &'a str, again: bool) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(format!("stop {answer} {again}"));
            if again { Verdict::default() } else { Verdict::blocked("run the tests first") }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_refuse_calls_add_context_and_keep_the_model_going() {
    let script = vec![
        Reply::tool("shell", json!({"command": "rm -rf /"})),
        Reply::tool("write_file", json!({"path": "a.txt", "content": "A"})),
        Reply::text("done"),
        Reply::text("tests pass, done"),
    ];
    // Ask with nobody to ask: only the hook's allow lets write_file run.
    let config = AgentConfig { approval: axon_core::ApprovalPolicy::Ask, ..AgentConfig::default() };
    let mut h = Harness::with_config(
        script,
        ProviderKind::OpenAi,
        ToolProtocol::Native,
        Profile::Code,
        config,
    )
    .await;
    let rules = Arc::new(Rules::default());
    h.agent.set_lifecycle(rules.clone());
    let outcome = h.run("make a.txt").await;
    assert_eq!(outcome, RunOutcome::Answered("tests pass, done".into()));
    assert_eq!(std::fs::read_to_string(h.path("a.txt")).unwrap(), "A");
    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    let first = requests[0].to_string();
    assert!(first.contains("the user is on a train"), "prompt context: {first}");
    // The hook's output is a command's: its secrets are masked too.
    assert!(!first.contains(PAT) && first.contains("[SECRET:"), "{first}");
    let second = requests[1].to_string();
    assert!(second.contains("A hook refused this call: shell is off on Fridays"), "{second}");
    let third = requests[2].to_string();
    assert!(third.contains("checked by the linter"), "{third}");
    let fourth = requests[3].to_string();
    assert!(fourth.contains("A stop hook asked you to go on: run the tests first"), "{fourth}");
    let seen = rules.seen.lock().unwrap().clone();
    assert_eq!(seen[0], "prompt make a.txt");
    assert_eq!(seen[1], "pre shell");
    assert!(!seen.iter().any(|s| s.starts_with("post shell")), "a refused call did not run");
    assert!(seen.iter().any(|s| s.starts_with("post write_file Created")), "{seen:?}");
    assert_eq!(&seen[seen.len() - 2..], ["stop done false", "stop tests pass, done true"]);
    let warnings: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert!(warnings.iter().any(|w| w == "post hook saw write_file"), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("stop hook kept the model going")), "{warnings:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_prompt_never_reaches_the_model() {
    let mut h = Harness::new(
        vec![Reply::text("never")],
        ProviderKind::OpenAi,
        ToolProtocol::Native,
        Profile::Code,
    )
    .await;
    h.agent.set_lifecycle(Arc::new(Rules::default()));
    let outcome = h.run("do the forbidden thing").await;
    assert_eq!(outcome, RunOutcome::Blocked("no forbidden work".into()));
    assert!(h.server.requests().is_empty());
    assert!(h.agent.history().is_empty(), "the refused prompt is not kept");
}

/// `"continue": false` from every hook: after a tool, and at a stop.
struct Halting;

impl Lifecycle for Halting {
    fn after_tool<'a>(
        &'a self,
        call: &'a ToolCall,
        _output: &'a ToolOutput,
    ) -> LifecycleFuture<'a> {
        let halt = (call.name == "write_file").then(|| "the build is red".to_string());
        Box::pin(async move { Verdict { halt, ..Verdict::default() } })
    }

    fn stopping<'a>(&'a self, _answer: &'a str, _again: bool) -> LifecycleFuture<'a> {
        // A stop that is also told to halt ends: halting wins over a block.
        Box::pin(async {
            Verdict {
                block: Some("keep going".into()),
                halt: Some("enough".into()),
                ..Verdict::default()
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_halts_ends_the_run_and_a_halting_stop_is_let_through() {
    let script = vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "A"})),
        Reply::text("never asked"),
    ];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    h.agent.set_lifecycle(Arc::new(Halting));
    assert_eq!(h.run("write").await, RunOutcome::Blocked("the build is red".into()));
    assert_eq!(h.server.requests().len(), 1, "no model call after the halt");
    assert_eq!(std::fs::read_to_string(h.path("a.txt")).unwrap(), "A", "the call itself ran");

    let mut h = Harness::new(
        vec![Reply::text("done")],
        ProviderKind::OpenAi,
        ToolProtocol::Native,
        Profile::Code,
    )
    .await;
    h.agent.set_lifecycle(Arc::new(Halting));
    assert_eq!(h.run("hi").await, RunOutcome::Answered("done".into()));
    assert_eq!(h.server.requests().len(), 1, "the stop was not turned into more work");
}

/// A PreToolUse hook that never answers; it says when it started.
struct Hanging(Arc<std::sync::atomic::AtomicBool>);

impl Lifecycle for Hanging {
    fn before_tool<'a>(&'a self, _call: &'a ToolCall, _spec: &'a ToolSpec) -> LifecycleFuture<'a> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_does_not_wait_for_a_hook() {
    let script = vec![Reply::tools(&[
        ("read_file", json!({"path": "a"})),
        ("read_file", json!({"path": "b"})),
    ])];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    h.agent.set_lifecycle(Arc::new(Hanging(Arc::clone(&started))));
    let cancel = common::cancel_when(move || started.load(std::sync::atomic::Ordering::SeqCst));
    let outcome =
        tokio::time::timeout(std::time::Duration::from_secs(60), h.run_with("x", &cancel))
            .await
            .expect("the run waited for the hook after the cancellation");
    assert!(matches!(outcome, RunOutcome::Cancelled(_)), "{outcome:?}");
    let history = h.agent.history();
    let results = history.iter().filter(|m| m.tool_call_id.is_some()).count();
    assert_eq!(results, 2, "both calls got a result: {history:?}");
}
