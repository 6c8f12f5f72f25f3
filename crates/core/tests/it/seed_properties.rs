//! Seed Correctness Properties of the agent loop, one proptest each, run
//! against a scripted model server over loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use crate::common::{Harness, cancel_when, received_is, runtime};
use axon_core::{AgentConfig, RunOutcome};
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::{AgentEvent, Role};
use axon_testkit::Reply;
use axon_tools::Profile;
use proptest::prelude::*;
use serde_json::json;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

fn kind() -> impl Strategy<Value = ProviderKind> {
    prop::sample::select(vec![ProviderKind::OpenAi, ProviderKind::Anthropic])
}

/// A tool call the model might make: good, failing, malformed or unknown.
fn any_call() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        Just(("read_file".to_string(), json!({"path": "present.txt"}).to_string())),
        Just(("read_file".to_string(), json!({"path": "absent.txt"}).to_string())),
        Just(("glob".to_string(), json!({"pattern": "*.txt"}).to_string())),
        Just(("write_file".to_string(), json!({"path": "out.txt", "content": "x"}).to_string())),
        Just(("write_file".to_string(), "{\"path\": \"broken".to_string())),
        "[a-z_]{3,12}".prop_map(|name| (name, "{}".to_string())),
    ]
}

fn answer_text() -> impl Strategy<Value = String> {
    "[^\u{0}]{1,80}"
}

proptest! {
    #![proptest_config(config())]

    /// Property 14 (seed 001): 并行工具调用结果完整性. *For any* N tool call
    /// requests (each with a unique tool_call_id), parallel execution yields
    /// exactly N tool-role messages, each tool_call_id matching its request,
    /// and all N result messages exist even when some tools fail.
    #[test]
    fn seed001_prop14_parallel_calls_all_get_results(
        calls in prop::collection::vec(any_call(), 1..7),
        kind in kind(),
    ) {
        runtime().block_on(async {
            let script = vec![Reply::ToolCalls { text: String::new(), calls: calls.clone() }, Reply::text("done")];
            let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
            std::fs::write(h.path("present.txt"), "here").unwrap();
            prop_assert_eq!(h.run("go").await, RunOutcome::Answered("done".into()));
            let history = h.agent.history();
            let asked = &history.iter().find(|m| !m.tool_calls.is_empty()).unwrap().tool_calls;
            let results: Vec<_> = history.iter().filter(|m| m.role == Role::Tool).collect();
            prop_assert_eq!(asked.len(), calls.len());
            prop_assert_eq!(results.len(), calls.len());
            let ids: HashSet<&str> = asked.iter().map(|c| c.id.as_str()).collect();
            prop_assert_eq!(ids.len(), calls.len(), "ids are unique");
            for (call, result) in asked.iter().zip(&results) {
                prop_assert_eq!(result.tool_call_id.as_deref(), Some(call.id.as_str()));
            }
            Ok(())
        })?;
    }

    /// Property 2 (seed 002): ReAct 循环结构不变性. *For any* ReAct-mode
    /// execution, every step follows thought–action–observation: a thought
    /// event always comes before the step's action events, and an
    /// observation comes after its action.
    #[test]
    fn seed002_prop02_react_steps_are_thought_action_observation(
        steps in prop::collection::vec(("[a-z ]{1,20}", prop::collection::vec(any_call(), 1..4)), 0..4),
        kind in kind(),
    ) {
        runtime().block_on(async {
            let mut script: Vec<Reply> = steps
                .iter()
                .map(|(thought, calls)| Reply::Turn { reasoning: thought.clone(), text: String::new(), calls: calls.clone() })
                .collect();
            script.push(Reply::text("finished"));
            let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
            prop_assert_eq!(h.run("go").await, RunOutcome::Answered("finished".into()));
            let mut open: Vec<String> = Vec::new();
            let mut acting = false;
            for event in h.events() {
                match event {
                    AgentEvent::Thought { .. } | AgentEvent::Token { .. } => {
                        prop_assert!(!acting, "a thought came after the step's actions began");
                    }
                    AgentEvent::Action { call, .. } => {
                        acting = true;
                        open.push(call.id);
                    }
                    AgentEvent::Observation { call_id, .. } => {
                        prop_assert!(open.contains(&call_id), "observation {} before its action", call_id);
                        open.retain(|id| *id != call_id);
                        if open.is_empty() {
                            acting = false;
                        }
                    }
                    _ => {}
                }
            }
            prop_assert!(open.is_empty(), "actions without observations: {:?}", open);
            Ok(())
        })?;
    }

    /// Property 3 (seed 002): 行动工具有效性. *For any* action the agent
    /// chooses during ReAct execution, the action's tool name must exist in
    /// the registered tool set.
    #[test]
    fn seed002_prop03_actions_name_registered_tools(
        calls in prop::collection::vec(any_call(), 1..6),
        kind in kind(),
    ) {
        runtime().block_on(async {
            let script = vec![Reply::ToolCalls { text: String::new(), calls }, Reply::text("ok")];
            let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
            h.run("go").await;
            let registered: HashSet<String> = Profile::Code.registry().names().map(String::from).collect();
            for event in h.events() {
                if let AgentEvent::Action { call, .. } = event {
                    prop_assert!(registered.contains(&call.name), "action on unregistered tool {}", call.name);
                }
            }
            Ok(())
        })?;
    }

    /// Property 4 (seed 002): ReAct 以答案终止. *For any* ReAct execution
    /// that completes successfully (not cancelled or failed), the final
    /// event must be an 'answer' event containing the response content.
    #[test]
    fn seed002_prop04_successful_runs_end_with_the_answer(
        tool_steps in prop::collection::vec(prop::collection::vec(any_call(), 1..3), 0..4),
        answer in answer_text(),
        kind in kind(),
    ) {
        runtime().block_on(async {
            let mut script: Vec<Reply> = tool_steps
                .into_iter()
                .map(|calls| Reply::ToolCalls { text: String::new(), calls })
                .collect();
            script.push(Reply::Text(answer.clone()));
            let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
            prop_assert_eq!(h.run("go").await, RunOutcome::Answered(answer.clone()));
            let events = h.events();
            prop_assert_eq!(events.last(), Some(&AgentEvent::Answer { text: answer }));
            Ok(())
        })?;
    }

    /// Property 15 (seed 002): 流式 Token 传递. *For any* streamed LLM
    /// response, tokens are produced incrementally as they arrive, and the
    /// concatenation of all produced tokens equals the complete response.
    #[test]
    fn seed002_prop15_streamed_tokens_concatenate_to_the_response(
        answer in answer_text(),
        kind in kind(),
    ) {
        runtime().block_on(async {
            let mut h = Harness::new(vec![Reply::Text(answer.clone())], kind, ToolProtocol::Native, Profile::Code).await;
            prop_assert_eq!(h.run("go").await, RunOutcome::Answered(answer.clone()));
            let tokens: Vec<String> = h.events().into_iter().filter_map(|e| match e {
                AgentEvent::Token { text } => Some(text),
                _ => None,
            }).collect();
            if answer.chars().count() > 4 {
                prop_assert!(tokens.len() > 1, "the answer arrived in one piece, not streamed");
            }
            prop_assert_eq!(tokens.concat(), answer);
            Ok(())
        })?;
    }

    /// Property 16 (seed 002): 流式取消保留部分内容. *For any* cancelled
    /// streaming operation, the partial content received before the
    /// cancellation is kept and accessible.
    #[test]
    fn seed002_prop16_cancelling_keeps_the_partial_text(partial in answer_text(), kind in kind()) {
        runtime().block_on(async {
            let config = AgentConfig { turn_retries: 0, ..AgentConfig::default() };
            let script = vec![Reply::Stall(partial.clone())];
            // Only the cancellation ends the stall, however late it comes.
            let mut h = Harness::stalling(script, kind, config).await;
            let received = std::sync::Arc::clone(&h.received);
            let expected = partial.clone();
            // Cancel once the agent has received every piece of the partial
            // text, whether it was shown or is held back as the possible
            // start of a tool call (`[`, `<`, `{` on a local server).
            let cancel = cancel_when(move || received_is(&received, &expected));
            let outcome = h.run_with("go", &cancel).await;
            prop_assert_eq!(outcome, RunOutcome::Cancelled(partial.clone()));
            let last = h.agent.history().last().unwrap();
            prop_assert_eq!(last.role, Role::Assistant);
            prop_assert_eq!(last.text(), partial);
            Ok(())
        })?;
    }

    /// Property 13 (seed 000): Multiple tool calls execute in order. *For
    /// any* AI response containing multiple json:tool blocks, the
    /// ExecutionLoop should execute them in the order they appear in the
    /// response.
    #[test]
    fn seed000_prop13_tool_blocks_execute_in_order(pieces in prop::collection::vec("[a-z0-9]{1,8}", 1..6)) {
        runtime().block_on(async {
            let blocks: String = pieces
                .iter()
                .map(|p| format!("```json:tool\n{}\n```\n", json!({"tool": "create_note", "params": {"path": "log", "content": format!("{p};"), "mode": "append"}})))
                .collect();
            let script = vec![Reply::Text(format!("Appending.\n{blocks}")), Reply::text("done")];
            let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Text, Profile::Vault).await;
            prop_assert_eq!(h.run("go").await, RunOutcome::Answered("done".into()));
            let written = std::fs::read_to_string(h.path("log.md")).unwrap();
            let expected: String = pieces.iter().map(|p| format!("{p};")).collect();
            prop_assert_eq!(written, expected);
            Ok(())
        })?;
    }

    /// Seed 003, recursion limit: recursive tool rounds stop at the maximum
    /// depth (the design's default is 5), end gracefully with a clear notice
    /// when the limit is reached, and keep the context consistent and the
    /// message history complete.
    #[test]
    fn seed003_recursion_limit_ends_gracefully(limit in 1u32..8, kind in kind()) {
        runtime().block_on(async {
            let script: Vec<Reply> = (0..limit + 2).map(|i| Reply::tool("glob", json!({"pattern": format!("*.{i}")}))).collect();
            let config = AgentConfig { max_iterations: limit, ..AgentConfig::default() };
            let mut h = Harness::with_config(script, kind, ToolProtocol::Native, Profile::Code, config).await;
            prop_assert!(matches!(h.run("go").await, RunOutcome::IterationLimit(_)));
            prop_assert_eq!(h.server.requests().len() as u32, limit);
            let last = h.events().last().cloned();
            prop_assert!(matches!(last, Some(AgentEvent::Warning { ref message }) if message.contains(&format!("stopped after {limit} model calls"))), "{:?}", last);
            let history = h.agent.history();
            let calls: usize = history.iter().map(|m| m.tool_calls.len()).sum();
            let results = history.iter().filter(|m| m.role == Role::Tool).count();
            prop_assert_eq!(calls, limit as usize);
            prop_assert_eq!(results, calls);
            Ok(())
        })?;
    }
}
