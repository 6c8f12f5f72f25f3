//! A saved session as an ATIF trajectory: steps, reasoning, tool calls and
//! their results, usage per model call and in total, and a damaged file
//! exported as far as it can be read. (Harbor's own validator checks what
//! axon writes in the cli's `atif` tests.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;

use axon_protocol::{ContentPart, Message, ToolCall, ToolOutput, Usage};
use axon_store::{
    ATIF_VERSION, Record, Redactor, SessionStore, StepSource, atif_json, load, to_atif,
};
use serde_json::{Value, json};

fn usage(input: u64, output: u64, cached: u64) -> Record {
    Record::Usage {
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            reasoning_tokens: 3,
        },
    }
}

/// A turn: a question, a reply that thinks and calls two tools (one fails),
/// their results, and a final answer; usage before each reply.
fn records() -> Vec<Record> {
    let mut user = Message::user("list the files");
    user.timestamp_ms = Some(1_795_817_524_123);
    let mut reply = Message::assistant("Looking.");
    reply.content.push(ContentPart::Thinking { text: "ls will do".into(), signature: None });
    reply.tool_calls = vec![
        ToolCall { id: "call_1".into(), name: "bash".into(), arguments: json!({"cmd": "ls"}) },
        ToolCall { id: "call_2".into(), name: "read".into(), arguments: json!({"path": "x"}) },
    ];
    let failed = Message::tool_result(
        "call_2",
        ToolOutput { content: vec![ContentPart::text("no such file")], is_error: true },
    );
    vec![
        Record::Turn { turn: 1, at: 1 },
        Record::message(user),
        usage(100, 20, 40),
        Record::message(reply),
        Record::message(Message::tool_result("call_1", ToolOutput::text("a.txt\nb.txt"))),
        Record::message(failed),
        usage(150, 10, 90),
        Record::message(Message::assistant("Two files: a.txt and b.txt.")),
    ]
}

fn saved(records: &[Record]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut writer = store
        .create("list the files", Path::new("/w"), "openai", "gpt-test", Redactor::default())
        .unwrap();
    for record in records {
        writer.append(record).unwrap();
    }
    let path = writer.path().to_path_buf();
    (dir, path)
}

#[test]
fn a_session_becomes_steps_with_calls_results_reasoning_and_usage() {
    let (_dir, path) = saved(&records());
    let session = load(&path).unwrap();
    let export = to_atif(&session, "9.9.9").unwrap();
    assert!(export.skipped.is_empty());
    let t = &export.trajectory;
    assert_eq!(t.schema_version, ATIF_VERSION);
    assert_eq!(t.session_id, session.header.id);
    assert_eq!((t.agent.name.as_str(), t.agent.version.as_str()), ("axon", "9.9.9"));
    assert_eq!(t.agent.model_name.as_deref(), Some("gpt-test"));
    let sources: Vec<StepSource> = t.steps.iter().map(|s| s.source).collect();
    assert_eq!(sources, [StepSource::User, StepSource::Agent, StepSource::Agent]);
    let ids: Vec<u32> = t.steps.iter().map(|s| s.step_id).collect();
    assert_eq!(ids, [1, 2, 3]);

    let user = &t.steps[0];
    assert_eq!(user.message, "list the files");
    assert_eq!(user.timestamp.as_deref(), Some("2026-11-27T22:12:04.123Z"));
    assert!(user.metrics.is_none() && user.model_name.is_none());

    let reply = &t.steps[1];
    assert_eq!(reply.message, "Looking.");
    assert_eq!(reply.reasoning_content.as_deref(), Some("ls will do"));
    assert_eq!(reply.model_name.as_deref(), Some("gpt-test"));
    let calls = reply.tool_calls.as_ref().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].tool_call_id.as_str(), calls[0].function_name.as_str()),
        ("call_1", "bash")
    );
    assert_eq!(Value::Object(calls[0].arguments.clone()), json!({"cmd": "ls"}));
    let results = &reply.observation.as_ref().unwrap().results;
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].source_call_id.as_deref(), Some("call_1"));
    assert_eq!(results[0].content.as_deref(), Some("a.txt\nb.txt"));
    assert_eq!(results[1].source_call_id.as_deref(), Some("call_2"));
    assert_eq!(results[1].extra.as_ref().unwrap()["is_error"], json!(true));
    let metrics = reply.metrics.as_ref().unwrap();
    assert_eq!(
        (metrics.prompt_tokens, metrics.completion_tokens, metrics.cached_tokens),
        (100, 20, 40)
    );
    assert_eq!(reply.llm_call_count, Some(1));

    let answer = &t.steps[2];
    assert_eq!(answer.message, "Two files: a.txt and b.txt.");
    assert!(answer.tool_calls.is_none() && answer.observation.is_none());
    assert_eq!(answer.metrics.as_ref().unwrap().prompt_tokens, 150);

    let totals = t.final_metrics.as_ref().unwrap();
    assert_eq!(
        (totals.total_prompt_tokens, totals.total_completion_tokens, totals.total_cached_tokens),
        (250, 30, 130)
    );
    assert_eq!(totals.total_steps, 3);
    assert!(t.notes.is_none());

    // The JSON has ATIF's field names and leaves out what is unknown.
    let json: Value = serde_json::from_str(&atif_json(t)).unwrap();
    assert_eq!(json["schema_version"], json!("ATIF-v1.8"));
    assert_eq!(json["steps"][0]["source"], json!("user"));
    assert!(json["steps"][0].get("metrics").is_none());
    assert_eq!(json["steps"][1]["tool_calls"][0]["function_name"], json!("bash"));
    assert_eq!(json["steps"][1]["observation"]["results"][0]["source_call_id"], json!("call_1"));
    assert_eq!(json["final_metrics"]["total_prompt_tokens"], json!(250));
}

#[test]
fn a_damaged_line_is_skipped_and_reported_and_the_rest_exported() {
    let (_dir, path) = saved(&records());
    // Damage the reply's line (the header is line 1, the turn line 2, the
    // question 3, its usage 4, the reply 5).
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines[4].contains("Looking."));
    lines[4] = "{\"type\":\"message\",\"message\":{\"role\":".to_string();
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, "{}", lines.join("\n")).unwrap();
    drop(file);

    let session = load(&path).unwrap();
    let export = to_atif(&session, "1.0.0").unwrap();
    assert_eq!(export.skipped.len(), 1, "{:?}", export.skipped);
    assert!(export.skipped[0].contains("line 5"), "{}", export.skipped[0]);
    let t = &export.trajectory;
    // The results of the lost reply's calls stand alone in system steps.
    let sources: Vec<StepSource> = t.steps.iter().map(|s| s.source).collect();
    assert_eq!(
        sources,
        [StepSource::User, StepSource::System, StepSource::System, StepSource::Agent]
    );
    let orphan = &t.steps[1].observation.as_ref().unwrap().results[0];
    assert!(orphan.source_call_id.is_none());
    assert_eq!(orphan.extra.as_ref().unwrap()["tool_call_id"], json!("call_1"));
    // The lost reply's usage belongs to no step but still counts in total.
    assert_eq!(t.steps[3].metrics.as_ref().unwrap().prompt_tokens, 150);
    let totals = t.final_metrics.as_ref().unwrap();
    assert_eq!(totals.total_prompt_tokens, 250);
    assert!(t.notes.as_ref().unwrap().contains("line 5"));
}

#[test]
fn a_session_without_messages_says_why_it_cannot_be_a_trajectory() {
    let (_dir, path) = saved(&[usage(1, 1, 0)]);
    let session = load(&path).unwrap();
    let error = to_atif(&session, "1.0.0").unwrap_err().to_string();
    assert!(
        error.contains("no readable message") && error.contains("axon sessions show"),
        "{error}"
    );
}

#[test]
fn compactions_and_rewound_messages_are_marked() {
    let mut all = records();
    all.push(usage(500, 50, 0));
    all.push(Record::Compaction {
        summary: "they listed files".into(),
        carried: None,
        kept: 1,
        at: 2,
    });
    all.push(Record::message(Message::user("thanks")));
    all.push(Record::Withdrawn { messages: 1, at: 3 });
    let (_dir, path) = saved(&all);
    let t = to_atif(&load(&path).unwrap(), "1.0.0").unwrap().trajectory;
    let compaction = &t.steps[3];
    assert_eq!(compaction.source, StepSource::System);
    assert!(compaction.message.contains("they listed files"));
    assert_eq!(compaction.extra.as_ref().unwrap()["usage"]["prompt_tokens"], json!(500));
    let last = t.steps.last().unwrap();
    assert_eq!(last.message, "thanks");
    assert_eq!(last.extra.as_ref().unwrap()["undone_by_rewind"], json!(true));
    let totals = t.final_metrics.as_ref().unwrap();
    assert_eq!(totals.total_prompt_tokens, 750);
    assert_eq!(totals.extra.as_ref().unwrap()["usage_without_step"]["prompt_tokens"], json!(500));
}

/// One record of a random session: messages of every role (tool results
/// answering calls that may or may not exist), usage, compactions,
/// withdrawals and failed turns.
fn any_record() -> impl proptest::strategy::Strategy<Value = Record> {
    use proptest::prelude::*;
    let id = "call_[0-3]";
    prop_oneof![
        "[a-z ]{0,12}".prop_map(|t| Record::message(Message::user(t))),
        "[a-z ]{0,12}".prop_map(|t| Record::message(Message::system(t))),
        ("[a-z ]{0,12}", proptest::option::of("[a-z ]{1,12}"), proptest::collection::vec(id, 0..3))
            .prop_map(|(text, thinking, ids)| {
                let mut reply = Message::assistant(text);
                if let Some(thinking) = thinking {
                    reply.content.push(ContentPart::Thinking { text: thinking, signature: None });
                }
                reply.tool_calls = ids
                    .into_iter()
                    .map(|id| ToolCall { id, name: "bash".into(), arguments: json!({"n": 1}) })
                    .collect();
                Record::message(reply)
            }),
        (id, any::<bool>()).prop_map(|(id, is_error)| {
            let output = ToolOutput { content: vec![ContentPart::text("out")], is_error };
            Record::message(Message::tool_result(id, output))
        }),
        (0u64..1000, 0u64..100).prop_map(|(i, o)| usage(i, o, i / 2)),
        Just(Record::Compaction { summary: "s".into(), carried: None, kept: 1, at: 5 }),
        (0usize..3).prop_map(|messages| Record::Withdrawn { messages, at: 6 }),
        Just(Record::TurnFailed { reason: "r".into(), at: 7 }),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 128, failure_persistence: None, ..Default::default()
    })]

    /// Whatever a session holds, its trajectory keeps the rules Harbor's
    /// validator checks: step ids 1, 2, 3…; fields only an agent step may
    /// have on agent steps only; every result's `source_call_id` among its
    /// own step's calls; and totals that are every usage record's sum.
    #[test]
    fn every_session_keeps_atifs_rules(records in proptest::collection::vec(any_record(), 1..30)) {
        let (_dir, path) = saved(&records);
        let session = load(&path).unwrap();
        let Ok(export) = to_atif(&session, "1.0.0") else {
            proptest::prop_assert!(session.messages().next().is_none());
            return Ok(());
        };
        let t = export.trajectory;
        for (i, step) in t.steps.iter().enumerate() {
            proptest::prop_assert_eq!(step.step_id as usize, i + 1);
            if step.source != StepSource::Agent {
                proptest::prop_assert!(step.model_name.is_none() && step.reasoning_content.is_none());
                proptest::prop_assert!(step.tool_calls.is_none() && step.metrics.is_none());
            }
            let calls: Vec<&str> = step.tool_calls.iter().flatten().map(|c| c.tool_call_id.as_str()).collect();
            for result in step.observation.iter().flat_map(|o| &o.results) {
                if let Some(id) = &result.source_call_id {
                    proptest::prop_assert!(calls.contains(&id.as_str()), "{id} not in step {}", step.step_id);
                }
            }
        }
        let totals = t.final_metrics.unwrap();
        proptest::prop_assert_eq!(totals.total_steps as usize, t.steps.len());
        proptest::prop_assert_eq!(totals.total_prompt_tokens, session.usage().input_tokens);
        let attributed: u64 = t.steps.iter().filter_map(|s| s.metrics.as_ref()).map(|m| m.prompt_tokens).sum();
        proptest::prop_assert!(attributed <= totals.total_prompt_tokens);
    }
}
