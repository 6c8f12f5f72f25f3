//! Issue 36 §3: a compaction keeps the task. Against a scripted model, after
//! a compaction the next request still holds every open checklist item, the
//! files changed and the plan step verbatim; a summary that leaves out what
//! is still to do is redone once, then refused; and two compactions inside
//! one plan step lose neither the step nor what the first one carried.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::common::{fast_retries, provider_config, runtime};
use axon_core::{Agent, AgentConfig, ApprovalPolicy, ContextStrategy, RunOutcome, Todo};
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

/// The last step of a four-step plan outgrows the window twice: two
/// compactions inside one step. The second replaces the message the first
/// led, so what the first carried (the checklist and the file changed in
/// step 1) must come through it, and the step must still be known as one.
#[test]
fn two_compactions_inside_one_plan_step_keep_the_step_and_what_the_first_carried() {
    use axon_core::plan::{StepDraft, execute, new_plan};
    runtime().block_on(async {
        let big = |what: &str| format!("{what} {}", "word ".repeat(3000));
        let step4 = "rewrite the tokenizer in lex.rs";
        let summary = |n: u32| {
            Reply::text(&format!(
                "Summary {n}: steps 1 to 3 are done. Still to do: rewrite the tokenizer (step 4, \
                 rewrite the tokenizer in lex.rs) and update the parser tests."
            ))
        };
        let mut script = working_turn();
        script.truncate(2);
        script.extend([
            Reply::text(&big("Step 1 done.")),
            Reply::text(&big("Step 2 done.")),
            Reply::text(&big("Step 3 done.")),
            // Step 4: its first request overflows, then the file it reads.
            summary(1),
            Reply::tool("read_file", json!({"path": "big.txt"})),
            summary(2),
            Reply::text("Step 4 done."),
        ]);
        let server = ScriptedServer::start(script).await.unwrap();
        let mut config = provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native);
        config.context_window = Some(WINDOW);
        let provider = build_provider(&config).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lex.rs"), "fn old() {}\n").unwrap();
        let lines = format!("{}\n", "word ".repeat(10)).repeat(300);
        std::fs::write(dir.path().join("big.txt"), lines).unwrap();
        let mut registry = Profile::Code.registry();
        registry.retain(|spec| ["read_file", "edit_file"].contains(&spec.name.as_str()));
        registry.register(Todo);
        let config = AgentConfig {
            retry: fast_retries(),
            approval: ApprovalPolicy::Auto,
            context_strategy: ContextStrategy::Summarize,
            ..AgentConfig::default()
        };
        let tools = ToolContext::new(Workspace::new(dir.path()).unwrap());
        let mut agent = Agent::new(provider, Arc::new(registry), tools, config);

        let draft = |d: &str| StepDraft { description: d.into(), expected_outcome: "done".into() };
        let mut plan = new_plan(
            "Port the lexer to the new API",
            vec![
                draft("read the old lexer"),
                draft("list its users"),
                draft("plan the change"),
                draft(step4),
            ],
        );
        let warnings = std::sync::Mutex::new(Vec::new());
        let emit = |event: AgentEvent| {
            if let AgentEvent::Warning { message } = event {
                warnings.lock().unwrap().push(message);
            }
        };
        let done = execute(&mut agent, &mut plan, &emit, &CancellationToken::new(), &|_| {}).await;
        let warnings = warnings.into_inner().unwrap();
        assert_eq!(done, axon_core::plan::Execution::Completed, "{warnings:?}");
        let summarised = warnings.iter().filter(|w| w.contains("were summarised")).count();
        assert_eq!(summarised, 2, "two compactions in step 4: {warnings:?}");

        let requests = server.requests();
        let last = requests.last().unwrap().to_string();
        let carried = last.matches("[Carried forward verbatim from before the compaction]").count();
        assert_eq!(carried, 1, "one block, not one inside another: {last}");
        assert_eq!(last.matches("[Summary of the earlier conversation").count(), 1, "{last}");
        assert!(last.contains("[>] rewrite the tokenizer"), "the checklist of step 1: {last}");
        assert!(last.contains("- lex.rs: "), "the file step 1 changed: {last}");
        assert!(last.contains(&format!("step 4, {step4}")), "the step: {last}");
        // The second summary was asked to name the step (it is still known).
        let second = requests[requests.len() - 2].to_string();
        assert!(second.contains("Summary 1") && second.contains(step4), "{second}");
    });
}

/// The window of the two-compaction test: three big answers overflow it,
/// two fit.
const WINDOW: u64 = 17_500;
