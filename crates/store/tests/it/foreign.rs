//! Issue 36 §5: other agents' sessions read into axon's messages. The
//! fixtures under `fixtures/foreign/` were written by the real Claude Code
//! and Codex CLIs (see its README); the inline lines below add the record
//! kinds a short session does not have.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_protocol::{ContentPart, Role};
use axon_store::foreign::{Imported, Source};

/// Every call has exactly one result, right after the assistant message
/// that made it (what providers require of a history).
fn well_formed(imported: &Imported) {
    let messages = &imported.messages;
    for (i, message) in messages.iter().enumerate() {
        for call in &message.tool_calls {
            let results: Vec<usize> = messages
                .iter()
                .enumerate()
                .filter(|(_, m)| {
                    m.role == Role::Tool && m.tool_call_id.as_deref() == Some(&call.id)
                })
                .map(|(j, _)| j)
                .collect();
            assert_eq!(results.len(), 1, "call {} has {} results", call.id, results.len());
            assert!(results[0] > i, "the result of {} comes after it", call.id);
            assert!(
                messages[i + 1..results[0]].iter().all(|m| m.role == Role::Tool),
                "only results come between call {} and its result",
                call.id
            );
        }
    }
}

#[test]
fn a_claude_transcript_maps_text_thinking_calls_and_results() {
    let lines = [
        r#"{"type":"queue-operation","operation":"enqueue","sessionId":"s-1"}"#,
        r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"List the files"},"uuid":"u1","sessionId":"s-1","cwd":"/w/proj","version":"2.1.332"}"#,
        r#"{"parentUuid":"u1","type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: local command output"},"uuid":"u2","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"u2","type":"attachment","attachment":{"type":"todo"},"uuid":"u3","sessionId":"s-1"}"#,
        r#"{"parentUuid":"u3","type":"assistant","message":{"model":"claude-sonnet-4-6","role":"assistant","content":[{"type":"thinking","thinking":"I will list.","signature":"sig"}]},"uuid":"a1","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"a1","type":"assistant","message":{"model":"claude-sonnet-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},"uuid":"a2","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"a2","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a.txt\nb.txt","is_error":false}]},"uuid":"u4","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"u4","type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"subagent"}]},"uuid":"x1","sessionId":"s-1"}"#,
        r#"{"parentUuid":"u4","type":"assistant","message":{"model":"claude-sonnet-4-6","role":"assistant","content":[{"type":"text","text":"An abandoned branch."}]},"uuid":"b1","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"u4","type":"assistant","message":{"model":"claude-sonnet-4-6","role":"assistant","content":[{"type":"text","text":"Two files."}]},"uuid":"a3","sessionId":"s-1","cwd":"/w/proj"}"#,
        r#"{"parentUuid":"a3","type":"future-kind","data":1,"uuid":"f1","sessionId":"s-1"}"#,
        "not json at all",
        r#"{"type":"last-prompt","leafUuid":"f1","sessionId":"s-1"}"#,
    ];
    let text = lines.join("\n");
    assert_eq!(Source::detect(&text), Some(Source::Claude));
    let imported = Imported::read(Source::Claude, &text);
    well_formed(&imported);
    assert_eq!(imported.id.as_deref(), Some("s-1"));
    assert_eq!(imported.workspace.as_deref(), Some(std::path::Path::new("/w/proj")));
    assert_eq!(imported.model.as_deref(), Some("claude-sonnet-4-6"));
    let roles: Vec<Role> = imported.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::User]);
    let call = &imported.messages[1];
    assert_eq!(call.tool_calls[0].name, "Bash");
    assert_eq!(call.tool_calls[0].arguments["command"], "ls");
    assert!(matches!(&call.content[0], ContentPart::Thinking { signature: None, .. }));
    assert_eq!(imported.messages[2].text(), "a.txt\nb.txt");
    assert_eq!(imported.messages[3].text(), "Two files.", "the branch of the leaf only");
    // The unknown record and the broken line are kept as text and named.
    let kept = imported.messages[4].text();
    assert!(kept.contains("future-kind") && kept.contains("not json at all"), "{kept}");
    let notes = imported.notes.join("\n");
    assert!(notes.contains("`future-kind`") && notes.contains("line 12 is not JSON"), "{notes}");
    assert!(notes.contains("1 records of other branches"), "{notes}");
    assert!(notes.contains("1 notes Claude Code added"), "{notes}");
    assert!(notes.contains("1 attachments"), "{notes}");
    assert_eq!(imported.title(), "List the files");
}

/// The files the real CLIs wrote (`fixtures/foreign/README.md`): one
/// request, one shell call and its result, the answer.
#[test]
fn the_real_claude_code_and_codex_files_import_whole() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/foreign");
    for (file, source, tool) in
        [("claude.jsonl", Source::Claude, "Bash"), ("codex.jsonl", Source::Codex, "exec_command")]
    {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(Source::detect(&text), Some(source), "{file}");
        let imported = Imported::read(source, &text);
        well_formed(&imported);
        let roles: Vec<Role> = imported.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant],
            "{file}: {:#?}",
            imported.messages
        );
        assert_eq!(
            imported.title(),
            "Run `echo hi` in the shell, then tell me what it printed.",
            "{file}"
        );
        assert_eq!(imported.messages[1].tool_calls[0].name, tool, "{file}");
        assert!(imported.messages[2].text().contains("hi"), "{file}");
        assert!(!imported.messages[2].is_error, "{file}");
        assert!(imported.messages[3].text().contains("The command printed: hi"), "{file}");
        assert!(
            imported.workspace.as_ref().is_some_and(|w| w.ends_with("workspace")),
            "{file}: {:?}",
            imported.workspace
        );
        assert!(
            !imported.notes.iter().any(|n| n.contains("kept as") || n.contains("unknown")),
            "{file}: nothing of a real file is unknown: {:?}",
            imported.notes
        );
    }
}

#[test]
fn a_codex_rollout_maps_messages_calls_outputs_and_leaves_its_context_out() {
    let lines = [
        r#"{"timestamp":"t","type":"session_meta","payload":{"id":"r-1","cwd":"/w/proj","cli_version":"0.171.0"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}"#,
        r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w/proj","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Count the files"}]}}"#,
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"Count the files"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"Use ls."}],"encrypted_content":"x"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":0}}"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"false\"]}","call_id":"call_2"}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Two."}]}}"#,
    ];
    let text = lines.join("\n");
    assert_eq!(Source::detect(&text), Some(Source::Codex));
    let imported = Imported::read(Source::Codex, &text);
    well_formed(&imported);
    assert_eq!(imported.id.as_deref(), Some("r-1"));
    assert_eq!(imported.model.as_deref(), Some("gpt-5-codex"));
    let roles: Vec<Role> = imported.messages.iter().map(|m| m.role).collect();
    // call_2 never got an output: it is given one, marked as an error, after
    // the message that made it (which the closing text joined).
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Tool]);
    assert_eq!(imported.messages[0].text(), "Count the files");
    assert_eq!(imported.messages[1].tool_calls[0].arguments["command"][0], "ls");
    assert!(matches!(&imported.messages[1].content[0], ContentPart::Thinking { .. }));
    assert!(imported.messages[2].text().contains("a\\nb"));
    assert_eq!(imported.messages[3].text(), "Two.");
    assert!(imported.messages[4].is_error);
    assert!(
        imported.notes.iter().any(|n| n.contains("2 messages of context Codex")),
        "{:?}",
        imported.notes
    );
}

/// Parallel calls, a result written late, a result for no call and a call
/// with no result, in each format (`fixtures/foreign/*-parallel.jsonl`,
/// written by hand in the real files' shapes): the history is valid, each
/// call's own result follows it, and what could not be paired is reported.
#[test]
fn parallel_calls_and_a_late_result_import_in_a_valid_order() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/foreign");
    for (file, source, ids) in [
        ("claude-parallel.jsonl", Source::Claude, ["toolu_A", "toolu_B", "toolu_GONE", "toolu_C"]),
        ("codex-parallel.jsonl", Source::Codex, ["call_A", "call_B", "call_GONE", "call_C"]),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(Source::detect(&text), Some(source), "{file}");
        let imported = Imported::read(source, &text);
        well_formed(&imported);
        let m = &imported.messages;
        let roles: Vec<Role> = m.iter().map(|m| m.role).collect();
        use Role::{Assistant, Tool, User};
        assert_eq!(
            roles,
            [User, Assistant, Tool, Tool, Assistant, User, Assistant, Tool],
            "{file}: {m:#?}"
        );
        let calls: Vec<&str> = m[1].tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(calls, ids[..2], "{file}: both calls in one message");
        // In call order, each with its own result, the late one included.
        assert_eq!(
            (m[2].tool_call_id.as_deref(), m[2].text().as_str()),
            (Some(ids[0]), "aaa"),
            "{file}"
        );
        assert_eq!(
            (m[3].tool_call_id.as_deref(), m[3].text().as_str()),
            (Some(ids[1]), "bbb"),
            "{file}"
        );
        assert_eq!(m[4].text(), "b.txt holds bbb;a.txt holds aaa.", "{file}: the answer, whole");
        assert!(m[5].text().contains(&format!("[tool result {}]\nstray", ids[2])), "{file}");
        assert_eq!(m[6].tool_calls[0].id, ids[3], "{file}");
        assert!(m[7].is_error && m[7].text().contains("no result was recorded"), "{file}");
        let notes = imported.notes.join("\n");
        assert!(notes.contains(&format!("does not have ({})", ids[2])), "{file}: {notes}");
        assert!(notes.contains(&format!("without a result ({})", ids[3])), "{file}: {notes}");
    }
}

/// One record of a made-up transcript, written in either format.
#[derive(Debug, Clone)]
enum Made {
    User(String),
    Text(String),
    /// A call and whether its result is in the file.
    Call(String, bool),
    /// The result of the call with this id.
    Result(String),
    /// A result for a call the file does not have.
    Stray(String),
}

fn claude_line(made: &Made, n: usize) -> String {
    let head = format!(
        r#""parentUuid":{},"isSidechain":false,"uuid":"r{n}","sessionId":"s","cwd":"/w""#,
        if n == 0 { "null".to_string() } else { format!("\"r{}\"", n - 1) }
    );
    let result = |id: &str, text: &str| {
        format!(
            r#"{{{head},"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{text}"}}]}}}}"#
        )
    };
    match made {
        Made::User(text) => {
            format!(r#"{{{head},"type":"user","message":{{"role":"user","content":"{text}"}}}}"#)
        }
        Made::Text(text) => format!(
            r#"{{{head},"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}]}}}}"#
        ),
        Made::Call(id, _) => format!(
            r#"{{{head},"type":"assistant","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{}}}}]}}}}"#
        ),
        Made::Result(id) => result(id, &format!("out-{id}")),
        Made::Stray(id) => result(id, "stray"),
    }
}

fn codex_line(made: &Made) -> String {
    let item = |payload: String| {
        format!(r#"{{"timestamp":"t","type":"response_item","payload":{payload}}}"#)
    };
    let output = |id: &str, text: &str| {
        item(format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"{text}"}}"#))
    };
    match made {
        Made::User(text) => item(format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#
        )),
        Made::Text(text) => item(format!(
            r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}"#
        )),
        Made::Call(id, _) => item(format!(
            r#"{{"type":"function_call","name":"shell","arguments":"{{}}","call_id":"{id}"}}"#
        )),
        Made::Result(id) => output(id, &format!("out-{id}")),
        Made::Stray(id) => output(id, "stray"),
    }
}

/// Records of turns with up to three calls each, some answered, plus
/// stray results, in any order.
fn shuffled_transcript() -> impl proptest::strategy::Strategy<Value = Vec<Made>> {
    use proptest::prelude::*;
    let turn = (proptest::collection::vec(any::<bool>(), 0..4), any::<bool>());
    proptest::collection::vec(turn, 1..5)
        .prop_map(|turns| {
            let mut records = Vec::new();
            for (t, (answered, stray)) in turns.iter().enumerate() {
                records.push(Made::User(format!("ask {t}")));
                records.push(Made::Text(format!("answer {t}")));
                for (k, has) in answered.iter().enumerate() {
                    let id = format!("c{t}_{k}");
                    records.push(Made::Call(id.clone(), *has));
                    if *has {
                        records.push(Made::Result(id));
                    }
                }
                if *stray {
                    records.push(Made::Stray(format!("gone{t}")));
                }
            }
            records
        })
        .prop_shuffle()
}

proptest::proptest! {
    /// Whatever order the records come in, the imported history pairs each
    /// call with exactly one result right after it (its own, when the file
    /// has one; else the "no result was recorded" error), and a stray
    /// result is kept as text.
    #[test]
    fn any_record_order_imports_a_valid_history(records in shuffled_transcript()) {
        let claude: Vec<String> = records.iter().enumerate().map(|(n, r)| claude_line(r, n)).collect();
        let codex: Vec<String> = std::iter::once(
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"r","cwd":"/w"}}"#.to_string(),
        )
        .chain(records.iter().map(codex_line))
        .collect();
        for (source, text) in [(Source::Claude, claude.join("\n")), (Source::Codex, codex.join("\n"))] {
            let imported = Imported::read(source, &text);
            well_formed(&imported);
            let text_of = |id: &str| {
                imported.messages.iter().find(|m| m.tool_call_id.as_deref() == Some(id)).map(|m| (m.text(), m.is_error))
            };
            for made in &records {
                match made {
                    Made::Call(id, true) => {
                        proptest::prop_assert_eq!(text_of(id), Some((format!("out-{id}"), false)));
                    }
                    Made::Call(id, false) => {
                        let (text, is_error) = text_of(id).unwrap();
                        proptest::prop_assert!(is_error && text.contains("no result was recorded"));
                    }
                    Made::Stray(id) => {
                        let kept = format!("[tool result {id}]");
                        proptest::prop_assert!(imported.messages.iter().any(|m| m.role == Role::User && m.text().contains(&kept)));
                    }
                    _ => {}
                }
            }
        }
    }
}

/// An image the user gave Claude Code (a base64 block of the Messages API)
/// joins the imported prompt; one by URL is noted, not fetched.
#[test]
fn a_claude_transcripts_base64_image_is_imported_and_a_url_one_noted() {
    let lines = [
        r#"{"parentUuid":null,"type":"user","message":{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]},"uuid":"u1","sessionId":"s-1","cwd":"/w"}"#,
        r#"{"parentUuid":"u1","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"A PNG header."}]},"uuid":"a1","sessionId":"s-1","cwd":"/w"}"#,
    ];
    let imported = Imported::read(Source::Claude, &lines.join("\n"));
    let prompt = &imported.messages[0];
    assert_eq!(
        prompt.content,
        [
            ContentPart::text("What is this?"),
            ContentPart::Image { media_type: "image/png".into(), data: "iVBORw0KGgo=".into() },
        ]
    );
    assert!(
        imported.notes.iter().any(|n| n.contains("by URL or file id (not imported)")),
        "{:?}",
        imported.notes
    );
}
