//! Seed Correctness Properties of the context manager, one proptest each:
//! the pure trims, and the agent's requests against a scripted model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Harness, runtime};
use axon_core::context::{CLEARED_NOTICE, budget, trim_messages, trim_to_budget};
use axon_core::tokens::TokenCounter;
use axon_core::{AgentConfig, RunOutcome};
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::{Message, Role, ToolCall, ToolOutput};
use axon_testkit::Reply;
use axon_tools::Profile;
use proptest::prelude::*;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

/// A turn: a user message, then either an answer or an assistant message
/// with calls followed by their results.
fn turn() -> impl Strategy<Value = Vec<Message>> {
    ("[a-z ]{1,200}", 0usize..3, "[a-z ]{0,300}").prop_map(|(ask, calls, result)| {
        let mut turn = vec![Message::user(ask)];
        if calls == 0 {
            turn.push(Message::assistant(result));
        } else {
            let mut assistant = Message::assistant("");
            for n in 0..calls {
                assistant.tool_calls.push(ToolCall {
                    id: format!("c{n}"),
                    name: "read_file".into(),
                    arguments: json!({"path": "a"}),
                });
            }
            turn.push(assistant);
            for n in 0..calls {
                turn.push(Message::tool_result(format!("c{n}"), ToolOutput::text(result.clone())));
            }
        }
        turn
    })
}

fn history() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(turn(), 1..12).prop_map(|turns| turns.concat())
}

/// Exact costs: counters estimate until loaded.
fn costs(history: &[Message]) -> Vec<u64> {
    let counter = TokenCounter::for_model("deepseek-chat");
    counter.load();
    history.iter().map(|m| counter.message(m)).collect()
}

proptest! {
    #![proptest_config(config())]

    /// Seed 001, property 13 (context trimming keeps the system message):
    /// "For any message history (1 system message and N non-system
    /// messages), when the total tokens exceed 80% of maxTokens, the output
    /// of trimMessages always contains the system message, and the removed
    /// messages are the oldest non-system messages."
    #[test]
    fn seed001_prop13_trim_keeps_system_and_drops_the_oldest(
        rest in history(),
        max_tokens in 50u64..4000,
    ) {
        let mut messages = vec![Message::system("You are axon.")];
        messages.extend(rest);
        let tokens = costs(&messages);
        let out = trim_messages(&messages, &tokens, max_tokens);
        prop_assert_eq!(&out[0], &messages[0]);
        let kept: Vec<&Message> = out[1..].iter().filter(|m| m.text() != CLEARED_NOTICE).collect();
        let originals = &messages[1..];
        // What is kept is a suffix of the non-system messages: the removed
        // ones are the oldest.
        let suffix = &originals[originals.len() - kept.len()..];
        prop_assert!(kept.iter().zip(suffix).all(|(a, b)| *a == b));
        if tokens.iter().sum::<u64>() <= budget(max_tokens) {
            prop_assert_eq!(out.len(), messages.len());
        }
        prop_assert!(out.len() > 1, "something besides the system message is always there");
    }

    /// Seed 002, property 13 (context token limit): "For any context sent
    /// to the LLM, the total token count must not exceed the model's maximum
    /// context window, and when truncation is needed, the most recent
    /// messages must be kept."
    #[test]
    fn seed002_prop13_context_fits_and_keeps_the_latest(
        history in history(),
        fixed in 0u64..200,
        limit in 100u64..5000,
    ) {
        let mut messages = history.clone();
        let mut tokens = costs(&messages);
        let keep = messages.iter().rposition(|m| m.role == Role::User).unwrap();
        let protected: u64 = tokens[keep..].iter().sum::<u64>() + fixed;
        let (_, new_keep) = trim_to_budget(&mut messages, &mut tokens, fixed, limit, keep);
        let total = fixed + tokens.iter().sum::<u64>();
        // Within the limit, unless the request itself is larger than it.
        prop_assert!(total <= limit || total == protected, "{total} > {limit}");
        prop_assert_eq!(tokens.len(), messages.len());
        prop_assert_eq!(&messages[..], &history[history.len() - messages.len()..], "a suffix is kept");
        prop_assert_eq!(messages[new_keep].role, Role::User);
        prop_assert_eq!(messages[0].role, Role::User, "what is sent starts with a user message");
        // Every call kept has its results.
        for (i, m) in messages.iter().enumerate() {
            for call in &m.tool_calls {
                prop_assert!(messages[i + 1..].iter().any(|r| r.tool_call_id.as_deref() == Some(&call.id)));
            }
        }
    }

    /// Seed 002, property 12 (context completeness): "For any message sent
    /// to the LLM, the context must contain all previous messages in the
    /// conversation and all tool results of previous tool calls (subject to
    /// the token limit)."
    #[test]
    fn seed002_prop12_each_request_contains_everything_before_it(
        turns in prop::collection::vec((0usize..3, "[a-z]{1,30}"), 1..4),
    ) {
        runtime().block_on(async {
            let mut script = Vec::new();
            for (calls, answer) in &turns {
                for _ in 0..*calls {
                    script.push(Reply::tool("glob", json!({"pattern": "*"})));
                }
                script.push(Reply::text(answer));
            }
            let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
            for (n, _) in turns.iter().enumerate() {
                let outcome = h.run(&format!("request {n}")).await;
                prop_assert!(matches!(outcome, RunOutcome::Answered(_)), "{outcome:?}");
            }
            let requests = h.server.requests();
            let sent: Vec<&Vec<Value>> = requests.iter().map(|r| r["messages"].as_array().unwrap()).collect();
            for pair in sent.windows(2) {
                prop_assert!(pair[1].len() > pair[0].len());
                prop_assert_eq!(&pair[1][..pair[0].len()], &pair[0][..], "an earlier request is a prefix of the next");
            }
            let last = sent.last().unwrap();
            let results = last.iter().filter(|m| m["role"] == "tool").count();
            let made: usize = turns.iter().map(|(calls, _)| calls).sum::<usize>();
            prop_assert_eq!(results, made, "every tool result so far is sent");
            Ok(())
        })?;
    }

    /// Seed 002, property 14 (context clearing): "For any new conversation
    /// request, after clearing, the context must contain zero messages from
    /// the previous conversation."
    #[test]
    fn seed002_prop14_a_cleared_context_sends_nothing_old(
        first in prop::collection::vec("[a-z]{4,20}", 1..4),
        second in "[A-Z]{4,20}",
    ) {
        runtime().block_on(async {
            let mut script: Vec<Reply> = first.iter().map(|_| Reply::text("ok")).collect();
            script.push(Reply::text("fresh"));
            let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
            for prompt in &first {
                h.run(prompt).await;
            }
            h.agent.clear();
            prop_assert!(h.agent.history().is_empty());
            h.run(&second).await;
            let requests = h.server.requests();
            let last = requests.last().unwrap()["messages"].as_array().unwrap().clone();
            let non_system: Vec<&Value> = last.iter().filter(|m| m["role"] != "system").collect();
            prop_assert_eq!(non_system.len(), 1);
            prop_assert_eq!(non_system[0]["content"].as_str(), Some(second.as_str()));
            Ok(())
        })?;
    }
}

/// A small window over several long turns: every request the model gets
/// fits the window, and the latest request is always in it.
#[test]
fn requests_stay_within_a_small_window() {
    runtime().block_on(async {
        let long = "word ".repeat(300);
        let script: Vec<Reply> = (0..6).map(|_| Reply::text(&long)).collect();
        let config =
            AgentConfig { system_prompt: "You are axon.".into(), ..AgentConfig::default() };
        let mut h = Harness::with_window(script, 2000, config).await;
        for n in 0..6 {
            let outcome = h.run(&format!("question {n}: {long}")).await;
            assert!(matches!(outcome, RunOutcome::Answered(_)), "{outcome:?}");
            assert!(h.agent.context_tokens() <= 2000, "{}", h.agent.context_tokens());
        }
        let counter = TokenCounter::for_model("scripted");
        counter.load();
        for (n, request) in h.server.requests().iter().enumerate() {
            let messages = request["messages"].as_array().unwrap();
            let tokens: u64 = messages.iter().map(|m| counter.text(&m.to_string())).sum();
            assert!(tokens <= 2000, "request {n}: {tokens} tokens");
            let last = messages.last().unwrap()["content"].as_str().unwrap();
            assert!(last.starts_with(&format!("question {n}:")), "request {n} lost its question");
        }
        let warned = h.events.lock().unwrap().iter().any(|e| {
            matches!(e, axon_protocol::AgentEvent::Warning { message } if message.contains("80 %"))
        });
        assert!(warned, "trimming is announced");
    });
}

/// Records what the agent journals.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<String>>);

impl axon_core::Journal for Recorder {
    fn message(&self, message: &Message, tokens: u64) {
        assert!(tokens > 0);
        self.0.lock().unwrap().push(format!("message {:?}", message.role));
    }
    fn usage(&self, _: &axon_protocol::Usage) {}
    fn compacted(&self, summary: &str, _carried: Option<&str>, kept: usize) {
        self.0.lock().unwrap().push(format!("compacted, {kept} kept: {summary}"));
    }
}

/// With `ContextStrategy::Summarize`, a history past 80 % of the window is
/// summarised by the model, the summary is sent in place of the old turns,
/// and the journal records the compaction.
#[test]
fn the_summarize_strategy_sends_a_summary_instead_of_old_turns() {
    runtime().block_on(async {
        let long = "word ".repeat(300);
        let mut script: Vec<Reply> = (0..3).map(|_| Reply::text(&long)).collect();
        script.push(Reply::text("SUMMARY: three questions about words were answered."));
        script.push(Reply::text("the last answer"));
        let config = AgentConfig {
            context_strategy: axon_core::ContextStrategy::Summarize,
            ..AgentConfig::default()
        };
        let mut h = Harness::with_window(script, 2000, config).await;
        let recorder = std::sync::Arc::new(Recorder::default());
        h.agent.set_journal(recorder.clone());
        for n in 0..4 {
            let outcome = h.run(&format!("question {n}: {long}")).await;
            assert!(matches!(outcome, RunOutcome::Answered(_)), "{outcome:?}");
        }
        let requests = h.server.requests();
        let summary_request =
            requests.iter().find(|r| r.to_string().contains("handoff summar")).unwrap();
        assert!(summary_request.to_string().contains("question 0"));
        let last = requests.last().unwrap().to_string();
        assert!(last.contains("SUMMARY: three questions about words were answered."), "{last}");
        assert!(!last.contains("question 0:"), "the summarised turn is not sent again");
        let journal = recorder.0.lock().unwrap();
        assert!(journal.iter().any(|e| e.starts_with("compacted, ")), "{journal:?}");
    });
}
