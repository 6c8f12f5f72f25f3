//! The agent loop end to end against scripted servers speaking the real
//! wire formats over loopback: tools, both formats, faults, cancellation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{Harness, cancel_when, received_is, shown_text_is};
use axon_core::{AgentConfig, ApprovalPolicy, RunOutcome};
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::{AgentEvent, Role};
use axon_testkit::Reply;
use axon_tools::Profile;
use serde_json::json;

const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

fn write_then_read() -> Vec<Reply> {
    vec![
        Reply::tool("write_file", json!({"path": "hello.md", "content": "hi\n"})),
        Reply::tool("read_file", json!({"path": "hello.md"})),
        Reply::text("hello.md says hi."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_through_tools_to_an_answer_in_both_formats() {
    for kind in KINDS {
        let mut h =
            Harness::new(write_then_read(), kind, ToolProtocol::Native, Profile::Code).await;
        let outcome = h.run("create hello.md saying hi, then read it back").await;
        assert_eq!(outcome, RunOutcome::Answered("hello.md says hi.".into()), "{kind:?}");
        assert_eq!(std::fs::read_to_string(h.path("hello.md")).unwrap(), "hi\n");
        let observations: Vec<String> = h
            .events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Observation { output, .. } => Some(output.text_content()),
                _ => None,
            })
            .collect();
        assert_eq!(observations, ["Created 'hello.md' (3 bytes, 1 lines)", "1 | hi"], "{kind:?}");
        // The second request carried the first call and its result back.
        let requests = h.server.requests();
        assert_eq!(requests.len(), 3);
        let sent = requests[2].to_string();
        assert!(sent.contains("1 | hi"), "{kind:?}: {sent}");
        assert!(sent.contains("Created 'hello.md'"), "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_calls_in_one_turn_all_get_results_with_matching_ids() {
    for kind in KINDS {
        let script = vec![
            Reply::tools(&[
                ("write_file", json!({"path": "a.txt", "content": "A"})),
                ("read_file", json!({"path": "a.txt"})),
                ("read_file", json!({"path": "missing.txt"})),
                ("glob", json!({"pattern": "*.txt"})),
            ]),
            Reply::text("done"),
        ];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        assert_eq!(h.run("go").await, RunOutcome::Answered("done".into()));
        let history = h.agent.history();
        let assistant = history.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
        let results: Vec<_> = history.iter().filter(|m| m.role == Role::Tool).collect();
        assert_eq!(results.len(), 4);
        for (call, result) in assistant.tool_calls.iter().zip(&results) {
            assert_eq!(result.tool_call_id.as_deref(), Some(call.id.as_str()));
        }
        // The read after the write saw the write (writes are barriers).
        assert_eq!(results[1].text(), "1 | A");
        assert!(results[2].is_error);
        assert_eq!(results[3].text(), "a.txt");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_in_one_turn_run_concurrently() {
    let calls: Vec<(&str, serde_json::Value)> =
        (0..3).map(|_| ("search", json!({"query": "x"}))).collect();
    let script = vec![Reply::tools(&calls), Reply::text("ok")];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    assert_eq!(h.run("search thrice").await, RunOutcome::Answered("ok".into()));
    let events = h.events();
    let first_observation =
        events.iter().position(|e| matches!(e, AgentEvent::Observation { .. })).unwrap();
    let actions_before = events[..first_observation]
        .iter()
        .filter(|e| matches!(e, AgentEvent::Action { .. }))
        .count();
    assert_eq!(actions_before, 3, "all three reads started before any finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_is_reported_as_thoughts_in_both_formats() {
    for kind in KINDS {
        let script = vec![Reply::Reasoning { reasoning: "let me think".into(), text: "42".into() }];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        assert_eq!(h.run("?").await, RunOutcome::Answered("42".into()));
        let thought: String = h
            .events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Thought { text } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(thought, "let me think", "{kind:?}");
        assert!(h.events().iter().any(|e| matches!(e, AgentEvent::Usage { .. })));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_honour_retry_after_then_succeed() {
    for kind in KINDS {
        let script = vec![
            Reply::Error {
                status: 429,
                headers: vec![("retry-after-ms".into(), "300".into())],
                body: r#"{"error":{"message":"slow down"}}"#.into(),
            },
            Reply::error(if kind == ProviderKind::Anthropic { 529 } else { 503 }, "{}"),
            Reply::text("fine"),
        ];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        let started = Instant::now();
        assert_eq!(h.run("hi").await, RunOutcome::Answered("fine".into()));
        assert!(started.elapsed() >= Duration::from_millis(300), "Retry-After was not honoured");
        let warnings =
            h.events().iter().filter(|e| matches!(e, AgentEvent::Warning { .. })).count();
        assert_eq!(warnings, 2, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_warning_says_it_retries_not_that_it_gave_up() {
    for kind in KINDS {
        let script = vec![
            Reply::Error {
                status: 429,
                headers: vec![("retry-after-ms".into(), "10".into())],
                body: r#"{"error":{"message":"slow down"}}"#.into(),
            },
            Reply::error(if kind == ProviderKind::Anthropic { 529 } else { 503 }, "{}"),
            Reply::text("fine"),
        ];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        assert_eq!(h.run("hi").await, RunOutcome::Answered("fine".into()));
        let warnings: Vec<String> = h
            .events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Warning { message } => Some(message),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 2, "{kind:?}: {warnings:?}");
        assert!(warnings[0].contains("rate limiting") && warnings[0].contains("slow down"));
        assert!(warnings[1].contains("overloaded"), "{warnings:?}");
        for warning in &warnings {
            assert!(warning.contains("retrying in"), "{warning}");
            assert!(!warning.contains("gave up"), "{warning}");
            assert!(!warning.contains("Try again later"), "{warning}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_first_token_is_reported_as_a_timeout_with_the_setting_to_raise() {
    for kind in KINDS {
        // The response starts, then nothing comes within the idle timeout.
        let script = vec![Reply::Stall(String::new()), Reply::text("whole answer")];
        let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
        assert_eq!(h.run("hi").await, RunOutcome::Answered("whole answer".into()));
        let reason = h
            .events()
            .into_iter()
            .find_map(|e| match e {
                AgentEvent::TurnRestarted { reason } => Some(reason),
                _ => None,
            })
            .unwrap();
        assert!(reason.contains("timed out after 2s"), "{kind:?}: {reason}");
        assert!(reason.contains("stream_idle_timeout_ms"), "{kind:?}: {reason}");
        assert!(!reason.contains("error decoding"), "{kind:?}: {reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_warnings_do_not_double_their_punctuation() {
    let script =
        vec![Reply::error(500, r#"{"error":{"message":"internal error."}}"#), Reply::text("fine")];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    assert_eq!(h.run("hi").await, RunOutcome::Answered("fine".into()));
    let warnings: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("internal error; retrying in"), "{warnings:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_are_asked_again() {
    for kind in KINDS {
        for broken in [
            Reply::Truncated("par".into()),
            Reply::Stall("par".into()),
            Reply::Corrupt("par".into()),
        ] {
            let script = vec![broken.clone(), Reply::text("whole answer")];
            let mut h = Harness::new(script, kind, ToolProtocol::Native, Profile::Code).await;
            let outcome = h.run("hi").await;
            assert_eq!(outcome, RunOutcome::Answered("whole answer".into()), "{kind:?} {broken:?}");
            // The same request was sent again.
            let requests = h.server.requests();
            assert_eq!(requests[0], requests[1], "{kind:?} {broken:?}");
            let restarted =
                h.events().iter().any(|e| matches!(e, AgentEvent::TurnRestarted { .. }));
            assert!(
                restarted,
                "{kind:?} {broken:?}: front ends were not told to discard the partial reply"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_that_retrying_cannot_fix_end_the_run_cleanly() {
    let script = vec![Reply::error(401, r#"{"error":{"message":"bad key"}}"#)];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    let RunOutcome::Failed(message) = h.run("hi").await else { panic!("expected failure") };
    assert!(message.contains("bad key") && message.contains("OPENAI_API_KEY"), "{message}");
    assert_eq!(h.server.requests().len(), 1, "a 401 must not be retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_length_error_trims_half_and_retries_once() {
    let too_long = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
    let mut script = Vec::new();
    for i in 0..4 {
        script.push(Reply::tool("glob", json!({"pattern": format!("*.{i}")})));
    }
    script.push(Reply::text("first done"));
    script.push(Reply::error(400, too_long));
    script.push(Reply::text("second done"));
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    assert_eq!(h.run("one").await, RunOutcome::Answered("first done".into()));
    let before = h.agent.history().len();
    assert_eq!(h.run("two").await, RunOutcome::Answered("second done".into()));
    let requests = h.server.requests();
    let sent = |i: usize| requests[i]["messages"].as_array().unwrap().len();
    let (failed, retried) = (sent(requests.len() - 2), sent(requests.len() - 1));
    assert!(retried * 2 <= failed + 2, "sent {failed} messages, then {retried}");
    assert!(h.agent.history().len() < before + 2);
    assert!(h.events().iter().any(
        |e| matches!(e, AgentEvent::Warning { message } if message.contains("context window"))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_keeps_partial_text_and_valid_history() {
    let script = vec![Reply::Stall("partial answ".into())];
    let config = AgentConfig { turn_retries: 0, ..AgentConfig::default() };
    let mut h = Harness::stalling(script, ProviderKind::OpenAi, config).await;
    let events = Arc::clone(&h.events);
    let cancel = cancel_when(move || shown_text_is(&events, "partial answ"));
    let outcome = h.run_with("hi", &cancel).await;
    assert_eq!(outcome, RunOutcome::Cancelled("partial answ".into()));
    let last = h.agent.history().last().unwrap();
    assert_eq!((last.role, last.text()), (Role::Assistant, "partial answ".to_string()));
}

/// On a local server the reader of leaked calls holds back what may begin
/// one (`[TOOL_CALLS]`, `<tool_call>`); a cancellation then keeps it too,
/// although it was never shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_keeps_text_held_back_as_a_possible_call() {
    let script = vec![Reply::Stall("Here it is: [TOOL".into())];
    let config = AgentConfig { turn_retries: 0, ..AgentConfig::default() };
    let mut h = Harness::stalling(script, ProviderKind::OpenAi, config).await;
    let received = Arc::clone(&h.received);
    let cancel = cancel_when(move || received_is(&received, "Here it is: [TOOL"));
    let outcome = h.run_with("hi", &cancel).await;
    assert_eq!(outcome, RunOutcome::Cancelled("Here it is: [TOOL".into()));
    assert!(!shown_text_is(&h.events, "Here it is: [TOOL"), "the possible call was shown");
    let last = h.agent.history().last().unwrap();
    assert_eq!(last.text(), "Here it is: [TOOL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_a_tool_gives_every_call_a_result() {
    let script = vec![Reply::tools(&[
        ("shell", json!({"command": "touch started; sleep 120"})),
        ("read_file", json!({"path": "x"})),
    ])];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    let started = h.path("started");
    let cancel = cancel_when(move || started.exists());
    // Far from the command's two minutes: the run ended by the cancellation.
    let outcome = tokio::time::timeout(Duration::from_secs(60), h.run_with("go", &cancel))
        .await
        .expect("the cancelled run waited for its shell command");
    assert!(matches!(outcome, RunOutcome::Cancelled(_)), "{outcome:?}");
    let results: Vec<_> = h.agent.history().iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.is_error && r.text().contains("Cancelled")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_iteration_limit_ends_with_a_warning_and_keeps_the_work() {
    let script: Vec<Reply> = (0..5)
        .map(|i| Reply::tool("write_file", json!({"path": format!("f{i}"), "content": "x"})))
        .collect();
    let config = AgentConfig { max_iterations: 3, ..AgentConfig::default() };
    let mut h = Harness::with_config(
        script,
        ProviderKind::OpenAi,
        ToolProtocol::Native,
        Profile::Code,
        config,
    )
    .await;
    assert!(matches!(h.run("loop").await, RunOutcome::IterationLimit(_)));
    assert_eq!(h.server.requests().len(), 3);
    assert!(h.path("f2").exists() && !h.path("f3").exists());
    assert!(matches!(h.events().last(), Some(AgentEvent::Warning { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_and_unknown_tools_go_back_to_the_model() {
    let script = vec![
        Reply::ToolCalls {
            text: String::new(),
            calls: vec![
                ("write_file".into(), "{\"path\": \"a\", \"cont".into()),
                ("teleport".into(), "{}".into()),
            ],
        },
        Reply::text("sorry"),
    ];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    assert_eq!(h.run("x").await, RunOutcome::Answered("sorry".into()));
    let results: Vec<String> =
        h.agent.history().iter().filter(|m| m.role == Role::Tool).map(|m| m.text()).collect();
    assert!(
        results[0]
            .starts_with("Invalid parameters for write_file: the arguments are not valid JSON"),
        "{}",
        results[0]
    );
    assert!(results[1].starts_with("Tool 'teleport' is not available."), "{}", results[1]);
    assert!(!h.path("a").exists());
    // No Action for a tool that does not exist.
    let actions: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Action { call, .. } => Some(call.name),
            _ => None,
        })
        .collect();
    assert_eq!(actions, ["write_file"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_policy_refuses_changes_with_a_reason() {
    let script =
        vec![Reply::tool("write_file", json!({"path": "a", "content": "x"})), Reply::text("ok")];
    let config = AgentConfig { approval: ApprovalPolicy::ReadOnly, ..AgentConfig::default() };
    let mut h = Harness::with_config(
        script,
        ProviderKind::OpenAi,
        ToolProtocol::Native,
        Profile::Code,
        config,
    )
    .await;
    assert_eq!(h.run("x").await, RunOutcome::Answered("ok".into()));
    assert!(!h.path("a").exists());
    let result = h.agent.history().iter().find(|m| m.role == Role::Tool).unwrap().text();
    assert!(result.starts_with("Refused: this session is read-only"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_protocol_runs_blocks_in_order_and_feeds_results_back() {
    let reply = "I will write then read.\n```json:tool\n{\"tool\": \"create_note\", \"params\": {\"path\": \"n\", \"content\": \"one\"}}\n```\n```json:tool\n{\"tool\": \"read_note\", \"params\": {\"path\": \"n\"}}\n```\n```json:tool\n{broken\n```";
    let script = vec![Reply::text(reply), Reply::text("The note says one.")];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Text, Profile::Vault).await;
    assert_eq!(h.run("x").await, RunOutcome::Answered("The note says one.".into()));
    let requests = h.server.requests();
    assert!(requests[0].get("tools").is_none(), "the text protocol sends no native tools");
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("```json:tool") && system.contains("### read_note"));
    let fed_back = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fed_back.contains("[1] create_note: ok"), "{fed_back}");
    assert!(fed_back.contains("[2] read_note: ok\none"), "{fed_back}");
    assert!(fed_back.contains("[3] (unreadable block): error\nInvalid JSON"), "{fed_back}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_retried_not_awaited_forever() {
    let script = vec![Reply::Silent, Reply::text("answered")];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    let outcome =
        tokio::time::timeout(Duration::from_secs(20), h.run("hi")).await.expect("the run hung");
    assert_eq!(outcome, RunOutcome::Answered("answered".into()));
    // Said as a timeout, with the setting that gives the server longer.
    let said: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } | AgentEvent::TurnRestarted { reason: message } => {
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("timed out after 2s") && m.contains("stream_idle_timeout_ms")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_mid_tool_leaves_a_history_that_can_be_sent_again() {
    let script = vec![
        Reply::tool("shell", json!({"command": "touch started; sleep 20"})),
        Reply::text("fresh start"),
    ];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    // A front end that gives up on the run drops its future mid-tool: once
    // the command is running, however long that takes.
    let started = h.path("started");
    tokio::select! {
        outcome = h.run("first") => panic!("the run ended before it was dropped: {outcome:?}"),
        () = async {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !started.exists() {
                assert!(Instant::now() < deadline, "the shell command never started");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } => {}
    }
    assert_eq!(h.run("second").await, RunOutcome::Answered("fresh start".into()));
    let sent = &h.server.requests()[1]["messages"];
    let messages = sent.as_array().unwrap();
    let call_id = messages[1]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], call_id);
    assert_eq!(messages[2]["content"], "Interrupted before it finished.");
    assert_eq!(messages[3]["content"], "second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_repeated_with_the_same_result_ends_in_an_answer_without_tools() {
    for kind in KINDS {
        let same = || Reply::tool("read_file", json!({"path": "notes.txt"}));
        let script = vec![same(), same(), same(), Reply::text("The word is pelican.")];
        let config = AgentConfig { max_iterations: 4, ..AgentConfig::default() };
        let mut h =
            Harness::with_config(script, kind, ToolProtocol::Native, Profile::Code, config).await;
        std::fs::write(h.path("notes.txt"), "pelican\n").unwrap();
        let outcome = h.run("read notes.txt").await;
        assert_eq!(outcome, RunOutcome::Answered("The word is pelican.".into()), "{kind:?}");
        let requests = h.server.requests();
        assert_eq!(requests.len(), 4, "{kind:?}");
        for early in &requests[..3] {
            assert!(early.get("tool_choice").is_none(), "{kind:?}: {early}");
        }
        let last = &requests[3];
        let none =
            if kind == ProviderKind::Anthropic { json!({"type": "none"}) } else { json!("none") };
        assert_eq!(last["tool_choice"], none, "{kind:?}");
        assert!(last["tools"].as_array().is_some_and(|t| !t.is_empty()), "tools stay defined");
        let sent = last.to_string();
        assert!(sent.contains("call number 2 of read_file"), "{kind:?}: {sent}");
        assert!(sent.contains("Tools are withheld"), "{kind:?}: {sent}");
        assert!(
            h.events().iter().any(|e| matches!(e, AgentEvent::Warning { message }
                if message.contains("read_file 3 times"))),
            "{kind:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_tools_withheld_a_text_protocol_block_is_not_run() {
    let block = "```json:tool\n{\"tool\": \"read_file\", \"params\": {\"path\": \"a\"}}\n```";
    let script = vec![
        Reply::text(block),
        Reply::text(block),
        Reply::text(block),
        Reply::text(&format!("Done.\n{block}")),
    ];
    let config = AgentConfig { max_iterations: 6, ..AgentConfig::default() };
    let mut h = Harness::with_config(
        script,
        ProviderKind::OpenAi,
        ToolProtocol::Text,
        Profile::Code,
        config,
    )
    .await;
    std::fs::write(h.path("a"), "x\n").unwrap();
    assert_eq!(h.run("read a").await, RunOutcome::Answered("Done.".into()));
    assert_eq!(h.server.requests().len(), 4);
    let observations =
        h.events().iter().filter(|e| matches!(e, AgentEvent::Observation { .. })).count();
    assert_eq!(observations, 3, "the fourth block was not run");
}
