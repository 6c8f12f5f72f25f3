//! Issue 36 §3: a compaction keeps the task. Against a scripted model, after
//! a compaction the next request still holds every open checklist item, the
//! files changed and the plan step verbatim; a summary that leaves out what
//! is still to do is redone once, then refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::common::{fast_retries, provider_config, runtime};
use axon_core::{Agent, AgentConfig, ApprovalPolicy, RunOutcome, Todo};
use axon_llm::{ProviderKind, ToolProtocol, build_provider};
use axon_protocol::AgentEvent;
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::{Profile, ToolContext, Workspace};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const OPEN: [&str; 2] = ["rewrite the tokenizer", "update the parser tests"];

/// An agent with the code tools and `todo`, on a scripted model.
async fn agent(script: Vec<Reply>) -> (ScriptedServer, tempfile::TempDir, Agent) {
    let server = ScriptedServer::start(script).await.unwrap();
    let provider =
        build_provider(&provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lex.rs"), "fn old() {}\n").unwrap();
    let mut registry = Profile::Code.registry();
    registry.register(Todo);
    let config = AgentConfig {
        retry: fast_retries(),
        approval: ApprovalPolicy::Auto,
        ..AgentConfig::default()
    };
    let tools = ToolContext::new(Workspace::new(dir.path()).unwrap());
    (server, dir, Agent::new(provider, Arc::new(registry), tools, config))
}

/// The first turn: a checklist with two open items and one edit.
fn working_turn() -> Vec<Reply> {
    vec![
        Reply::tool(
            "todo",
            json!({"items": [
                {"content": "read the old lexer", "status": "completed"},
                {"content": OPEN[0], "status": "in_progress"},
                {"content": OPEN[1], "status": "pending"}]}),
        ),
        Reply::tool("edit_file", json!({"path": "lex.rs", "old_str": "old", "new_str": "new"})),
        Reply::text("The lexer is edited; the tokenizer is next."),
        // The answer to the second request, "go on".
        Reply::text("Still working."),
    ]
}

async fn ask(agent: &mut Agent, prompt: &str) -> RunOutcome {
    agent.run(prompt, &|_| {}, &CancellationToken::new()).await
}

async fn compact(agent: &mut Agent) -> (Result<usize, String>, Vec<String>) {
    let warnings = std::sync::Mutex::new(Vec::new());
    let emit = |event: AgentEvent| {
        if let AgentEvent::Warning { message } = event {
            warnings.lock().unwrap().push(message);
        }
    };
    let result = agent.compact_all(&emit, &CancellationToken::new()).await;
    (result, warnings.into_inner().unwrap())
}

#[test]
fn after_a_compaction_the_next_request_holds_every_open_item_and_changed_file() {
    runtime().block_on(async {
        let mut script = working_turn();
        // The summary paraphrases; the carried block must not depend on it.
        script.push(Reply::text(
            "The old lexer was read and edited. Still to do: rewrite the tokenizer, then update \
             the parser tests.",
        ));
        script.push(Reply::text("Working on the tokenizer."));
        let (server, _dir, mut agent) = agent(script).await;
        let outcome = ask(&mut agent, "Port the lexer to the new API").await;
        assert!(matches!(outcome, RunOutcome::Answered(_)), "{outcome:?}");
        assert!(matches!(ask(&mut agent, "go on").await, RunOutcome::Answered(_)));
        let (result, _) = compact(&mut agent).await;
        assert!(result.unwrap() > 0, "something was summarised");
        assert!(matches!(ask(&mut agent, "and now?").await, RunOutcome::Answered(_)));

        let requests = server.requests();
        let summary_request = requests[requests.len() - 2].to_string();
        for item in OPEN {
            assert!(summary_request.contains(item), "the summariser is told {item}");
        }
        let last = requests.last().unwrap().to_string();
        assert!(last.contains("[Carried forward verbatim from before the compaction]"), "{last}");
        assert!(last.contains("[>] rewrite the tokenizer"), "the checklist verbatim: {last}");
        assert!(last.contains("[ ] update the parser tests"), "{last}");
        assert!(last.contains("- lex.rs: "), "the changed file: {last}");
        // The latest request ("go on") is kept as it was, after the block; the
        // carried copy of a request is for plan steps, whose request is axon's.
        assert!(last.contains("[End of carried state]\\n\\ngo on"), "{last}");
        assert!(!last.contains("read the old lexer\\\",\\\"status"), "old turns are not resent");
    });
}

#[test]
fn a_summary_that_drops_the_open_items_is_redone_then_refused() {
    runtime().block_on(async {
        let mut script = working_turn();
        script.push(Reply::text("Some work on a lexer happened."));
        script.push(Reply::text("Work happened."));
        let (server, _dir, mut agent) = agent(script).await;
        assert!(matches!(ask(&mut agent, "Port the lexer").await, RunOutcome::Answered(_)));
        assert!(matches!(ask(&mut agent, "go on").await, RunOutcome::Answered(_)));
        let before = server.requests().len();
        let (result, _) = compact(&mut agent).await;
        let error = result.unwrap_err();
        assert_eq!(server.requests().len(), before + 2, "asked once, then once again");
        for item in OPEN {
            assert!(error.contains(item), "the refusal names {item}: {error}");
        }

        // The first summary misses; the second names both: it is used.
        server.push([
            Reply::text("Only the lexer so far."),
            Reply::text("Left: rewrite the tokenizer and update the parser tests."),
            Reply::text("ok"),
        ]);
        assert!(compact(&mut agent).await.0.is_ok());
        assert!(matches!(ask(&mut agent, "next").await, RunOutcome::Answered(_)));
        let last = server.requests().last().unwrap().to_string();
        assert!(last.contains("Left: rewrite the tokenizer"), "{last}");
    });
}
