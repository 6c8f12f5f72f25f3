//! The published event-stream schema, `docs/events.schema.json`, is exactly
//! what the types generate; it accepts a sample of every event type (and of
//! every preview kind and content part) and refuses malformed events; and
//! `docs/events.md` documents every event type with example lines that the
//! schema accepts.
//!
//! When the types change, regenerate the file with
//! `AXON_UPDATE_SCHEMA=1 cargo test -p axon-protocol --test it events_schema::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use axon_protocol::{
    AgentEvent, ApprovalMode, ContentPart, McpServerInfo, McpState, Message, Mode, Op, Plan,
    PlanStatus, PlanStep, Preview, RuleSuggestion, SCHEMA_VERSION, SandboxInfo, SandboxMode,
    SessionInfo, SkillInfo, SkillState, StepStatus, StopReason, ToolCall, ToolOutput, Usage,
};
use serde_json::{Value, json};

const REGENERATE: &str =
    "AXON_UPDATE_SCHEMA=1 cargo test -p axon-protocol --test it events_schema::";

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// The schema as the types generate it, in the checked-in file's form.
fn generated_text() -> String {
    let schema = schemars::schema_for!(AgentEvent);
    let mut text = serde_json::to_string_pretty(&schema).unwrap();
    text.push('\n');
    text
}

fn generated() -> Value {
    serde_json::from_str(&generated_text()).unwrap()
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&generated()).unwrap()
}

/// Why `schema` refuses `instance`, one problem a line (empty if it
/// accepts it). An internally tagged enum's schema is a `oneOf`, whose own
/// error only says that no branch matched; the branch named by the
/// instance's `tag` says which field is wrong.
fn violations(schema: &Value, tag: &str, instance: &Value) -> Vec<String> {
    let whole = jsonschema::validator_for(schema).unwrap();
    if whole.is_valid(instance) {
        return Vec::new();
    }
    let name = instance.get(tag).and_then(Value::as_str);
    let branch = schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| name.is_some() && b["properties"][tag]["const"].as_str() == name);
    let validator = match branch {
        Some(branch) => {
            let mut single = branch.clone();
            single["$schema"] = schema["$schema"].clone();
            single["$defs"] = schema["$defs"].clone();
            jsonschema::validator_for(&single).unwrap()
        }
        None => whole,
    };
    let problems: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("at '{}': {e}", e.instance_path()))
        .collect();
    assert!(!problems.is_empty(), "refused by the schema, accepted by its `{tag}` branch");
    problems
}

/// The names an internally tagged enum's schema allows in its `tag` field,
/// read from its `oneOf` branches.
fn tag_names(schema: &Value, tag: &str) -> BTreeSet<String> {
    schema["oneOf"]
        .as_array()
        .expect("an internally tagged enum becomes a oneOf")
        .iter()
        .map(|branch| {
            branch["properties"][tag]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("a oneOf branch without a const {tag}: {branch}"))
                .to_string()
        })
        .collect()
}

#[test]
fn the_checked_in_schema_is_the_one_the_types_generate() {
    let path = docs_dir().join("events.schema.json");
    let fresh = generated_text();
    if std::env::var_os("AXON_UPDATE_SCHEMA").is_some_and(|v| !v.is_empty()) {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let stored = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!("cannot read {}: {e}; generate it with `{REGENERATE}`", path.display()),
    };
    if stored != fresh {
        let first = stored
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| stored.lines().count().min(fresh.lines().count()));
        panic!(
            "{} is out of date with the event types in crates/protocol/src \
             (first difference at line {}: file has {:?}, types generate {:?}).\n\
             Regenerate it with `{REGENERATE}` and commit it. A renamed or removed \
             field or type also raises SCHEMA_VERSION (see docs/events.md).",
            path.display(),
            first + 1,
            stored.lines().nth(first).unwrap_or("<end of file>"),
            fresh.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall { id: "call_1".into(), name: name.into(), arguments }
}

fn plan(status: PlanStatus, first: StepStatus) -> Plan {
    Plan {
        id: "plan-1".into(),
        goal: "rename the crate".into(),
        steps: vec![
            PlanStep {
                id: 1,
                description: "find every use".into(),
                expected_outcome: "a list of files".into(),
                status: first,
                result: Some("12 files".into()),
            },
            PlanStep {
                id: 2,
                description: "edit them".into(),
                expected_outcome: "the build passes".into(),
                status: StepStatus::Pending,
                result: None,
            },
        ],
        status,
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_500,
    }
}

fn usage() -> Usage {
    Usage { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 1024, reasoning_tokens: 16 }
}

/// At least one event of every type; every preview kind, content part,
/// MCP state and stop reason appears somewhere.
fn samples() -> Vec<AgentEvent> {
    let mut events = vec![
        AgentEvent::header("axon 0.1.0"),
        AgentEvent::SessionStarted {
            session: SessionInfo {
                session_id: None,
                workspace: "/home/me/project".into(),
                provider: "openai".into(),
                model: "gpt-4.1".into(),
                context_window: 1_047_576,
                mode: Mode::React,
                approval: ApprovalMode::Ask,
                tools: vec!["read_file".into(), "mcp_files_list".into()],
                mcp_servers: vec![
                    McpServerInfo { name: "files".into(), state: McpState::Ready, message: None },
                    McpServerInfo {
                        name: "web".into(),
                        state: McpState::Error,
                        message: Some("command not found: web-mcp".into()),
                    },
                ],
                rules: vec!["1. Use tabs.".into()],
                skills: vec![
                    SkillInfo {
                        name: "release".into(),
                        state: SkillState::Injected,
                        source: ".axon/skills/release.md".into(),
                        description: "How to cut a release".into(),
                    },
                    SkillInfo {
                        name: "deploy".into(),
                        state: SkillState::Listed,
                        source: "~/.axon/skills/deploy.md".into(),
                        description: "Deploying".into(),
                    },
                    SkillInfo {
                        name: "broken".into(),
                        state: SkillState::Failed,
                        source: ".axon/skills/broken.md".into(),
                        description: "no front matter".into(),
                    },
                ],
                context_tokens: 2310,
                sandbox: Some(SandboxInfo {
                    mode: SandboxMode::WorkspaceWrite,
                    network: false,
                    enforced: true,
                    detail: "Landlock and seccomp".into(),
                }),
                usage: Usage::default(),
                cost_usd: None,
            },
        },
        AgentEvent::SessionStarted {
            session: SessionInfo {
                session_id: Some("20250101-120000-ab12".into()),
                workspace: "/w".into(),
                provider: "anthropic".into(),
                model: "claude-sonnet-4-5".into(),
                context_window: 200_000,
                mode: Mode::Plan,
                approval: ApprovalMode::Ask,
                tools: vec![],
                mcp_servers: vec![],
                rules: vec![],
                skills: vec![],
                context_tokens: 0,
                sandbox: None,
                // A resumed session: what it spent before comes with it.
                usage: usage(),
                cost_usd: Some(0.0456),
            },
        },
        AgentEvent::History {
            messages: vec![
                Message::system("You are axon."),
                Message {
                    role: axon_protocol::Role::User,
                    content: vec![
                        ContentPart::text("what is in this picture?"),
                        ContentPart::Image { media_type: "image/png".into(), data: "iVBOR".into() },
                        ContentPart::Audio { media_type: "audio/wav".into(), data: "UklGR".into() },
                    ],
                    tool_calls: vec![],
                    tool_call_id: None,
                    is_error: false,
                    refused: false,
                    timestamp_ms: Some(1_700_000_000_000),
                },
                Message {
                    role: axon_protocol::Role::Assistant,
                    content: vec![ContentPart::Thinking {
                        text: "look first".into(),
                        signature: Some("sig".into()),
                    }],
                    tool_calls: vec![call("read_file", json!({"path": "a.txt"}))],
                    tool_call_id: None,
                    is_error: false,
                    refused: false,
                    timestamp_ms: None,
                },
                Message::tool_result("call_1", ToolOutput::error("no such file")),
            ],
        },
        AgentEvent::SessionSaved { session_id: "20250101-120000-ab12".into() },
        AgentEvent::TurnStarted { turn: 1 },
        AgentEvent::Token { text: "Hel".into() },
        AgentEvent::Thought { text: "The user wants a list.".into() },
        AgentEvent::Action {
            refused: false,
            preview: None,
            call: call("glob", json!({"pattern": "*.rs"})),
        },
        AgentEvent::Observation {
            call_id: "call_1".into(),
            name: "glob".into(),
            output: ToolOutput::text("src/main.rs"),
        },
        AgentEvent::PlanProposed { plan: plan(PlanStatus::Draft, StepStatus::Pending) },
        AgentEvent::PlanChanged { plan: plan(PlanStatus::Executing, StepStatus::Running) },
        AgentEvent::PlanChanged { plan: plan(PlanStatus::Completed, StepStatus::Completed) },
        AgentEvent::PlanChanged { plan: plan(PlanStatus::Failed, StepStatus::Failed) },
        AgentEvent::PlanChanged { plan: plan(PlanStatus::Approved, StepStatus::Skipped) },
        AgentEvent::StepStarted { step: 1, description: "find every use".into() },
        AgentEvent::StepComplete { step: 1, result: "12 files".into() },
        AgentEvent::Answer { text: "Done.".into() },
        AgentEvent::ModelChanged {
            provider: "openai".into(),
            model: "gpt-4.1-mini".into(),
            context_window: 1_047_576,
        },
        AgentEvent::Models {
            provider: "openai".into(),
            current: "gpt-4.1".into(),
            models: vec!["gpt-4.1".into(), "gpt-4.1-mini".into()],
        },
        AgentEvent::BackgroundCommands {
            commands: vec![
                axon_protocol::BackgroundCommand {
                    id: "bg1".into(),
                    command: "npm run dev".into(),
                    seconds: 95,
                    ended: None,
                    unread: 2048,
                },
                axon_protocol::BackgroundCommand {
                    id: "bg2".into(),
                    command: "cargo build".into(),
                    seconds: 41,
                    ended: Some("exit status 0".into()),
                    unread: 0,
                },
            ],
        },
        AgentEvent::TurnRestarted { reason: "the stream broke off".into() },
        AgentEvent::Prompt { text: "tidy the tests".into(), attachments: vec![] },
        AgentEvent::Prompt {
            text: "compare them".into(),
            attachments: vec!["src/lib.rs".into(), "image/png".into()],
        },
        AgentEvent::ModeChanged { mode: Mode::Plan, approval: ApprovalMode::Auto },
        AgentEvent::Info { message: "compacted 40 messages".into() },
        AgentEvent::Warning { message: "retrying in 2 s".into() },
        AgentEvent::Error { message: "the provider refused the key".into() },
        AgentEvent::Usage { usage: usage(), model: None },
        AgentEvent::Usage { usage: usage(), model: Some("deepseek-chat".into()) },
        AgentEvent::Custom { name: "x-editor".into(), data: json!({"anything": [1, null]}) },
        AgentEvent::ToolProgress {
            call_id: "call_3".into(),
            message: Some("indexing".into()),
            progress: 2.0,
            total: Some(5.0),
        },
        AgentEvent::ToolProgress {
            call_id: "call_3".into(),
            message: None,
            progress: 7.0,
            total: None,
        },
        AgentEvent::Elicitation {
            id: "form-1".into(),
            server: "tickets".into(),
            message: "Which project?".into(),
            schema: json!({"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}),
        },
        AgentEvent::Subagent {
            call_id: "call_7".into(),
            agent: "reviewer".into(),
            event: Box::new(AgentEvent::Subagent {
                call_id: "call_1".into(),
                agent: "explorer".into(),
                event: Box::new(AgentEvent::Token { text: "found it".into() }),
            }),
        },
    ];
    for state in [McpState::Connecting, McpState::Ready, McpState::Error, McpState::Closed] {
        let message = (state == McpState::Error).then(|| "exited with status 1".to_string());
        events.push(AgentEvent::McpStatus { server: "files".into(), state, message });
    }
    for stop_reason in
        [StopReason::EndTurn, StopReason::MaxIterations, StopReason::Cancelled, StopReason::Error]
    {
        events.push(AgentEvent::TurnCompleted {
            turn: 1,
            stop_reason,
            usage: usage(),
            context_tokens: 4000,
            cost_usd: None,
            session_usage: usage(),
            session_cost_usd: None,
        });
    }
    events.push(AgentEvent::TurnCompleted {
        turn: 2,
        stop_reason: StopReason::EndTurn,
        usage: usage(),
        context_tokens: 4000,
        cost_usd: Some(0.0123),
        session_usage: Usage { input_tokens: 2400, output_tokens: 160, ..usage() },
        session_cost_usd: Some(0.0579),
    });
    let previews = [
        Preview::Diff {
            path: "a.txt".into(),
            diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n".into(),
            created: false,
        },
        Preview::Command {
            command: "cargo test".into(),
            workdir: ".".into(),
            sandbox: Some("workspace-write, network off".into()),
        },
        Preview::Command { command: "curl example.org".into(), workdir: ".".into(), sandbox: None },
        Preview::Mcp { server: "files".into(), tool: "list".into(), arguments: json!({}) },
        Preview::Arguments { arguments: json!({"anything": true}) },
        Preview::Invalid { message: "path is outside the workspace".into() },
        Preview::Sampling {
            server: "files".into(),
            messages: 2,
            characters: 340,
            max_tokens: 500,
            system_prompt: Some("You summarise files".into()),
        },
        Preview::Sampling {
            server: "files".into(),
            messages: 1,
            characters: 12,
            max_tokens: 100,
            system_prompt: None,
        },
    ];
    for preview in previews {
        events.push(AgentEvent::ApprovalRequested {
            call: call("write_file", json!({"path": "a.txt", "content": "y\n"})),
            preview,
            rule: None,
        });
    }
    events.push(AgentEvent::ApprovalRequested {
        call: call("shell", json!({"command": "cargo test"})),
        preview: Preview::Command {
            command: "cargo test".into(),
            workdir: ".".into(),
            sandbox: None,
        },
        rule: Some(RuleSuggestion {
            rules: vec!["shell(cargo test:*)".into()],
            description: "allow `cargo test` commands in this workspace".into(),
        }),
    });
    events
}

#[test]
fn every_event_type_serializes_to_json_the_schema_accepts() {
    let schema = generated();
    let mut seen = BTreeSet::new();
    for event in samples() {
        let value = serde_json::to_value(&event).unwrap();
        let problems = violations(&schema, "type", &value);
        assert!(problems.is_empty(), "{value}\nis refused by the schema:\n{}", problems.join("\n"));
        // What the schema accepts, serde reads back as the same event.
        let back: AgentEvent = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, event, "{value}");
        seen.insert(value["type"].as_str().unwrap().to_string());
    }
    let missing: Vec<_> = tag_names(&schema, "type").difference(&seen).cloned().collect();
    assert!(missing.is_empty(), "no sample of these event types: {missing:?}");
}

#[test]
fn the_header_is_the_documented_first_line() {
    let line = serde_json::to_string(&AgentEvent::header("axon 0.1.0")).unwrap();
    assert_eq!(
        line,
        format!(r#"{{"type":"header","schema":{SCHEMA_VERSION},"producer":"axon 0.1.0"}}"#)
    );
}

#[test]
fn malformed_events_are_refused() {
    let schema = generated();
    let validator = validator();
    let session = samples()
        .into_iter()
        .find(|e| matches!(e, AgentEvent::SessionStarted { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .unwrap();
    let completed = json!({"type": "turn_completed", "turn": 1, "stop_reason": "end_turn",
                           "usage": {"input_tokens": 1, "output_tokens": 1}, "context_tokens": 0});
    let approval = json!({"type": "approval_requested",
                          "call": {"id": "c", "name": "write_file", "arguments": {}},
                          "preview": {"kind": "diff", "path": "a", "diff": "", "created": true}});
    let observation = json!({"type": "observation", "call_id": "c", "name": "glob",
                             "output": {"content": [{"type": "text", "text": "a"}]}});
    let token = json!({"type": "token", "text": "x"});
    // Each case damages an event the schema accepts in one way, so a case
    // fails only for the damage it names.
    type Damage = fn(&mut Value);
    let cases: [(&str, Value, Damage); 16] = [
        ("an unknown type", token.clone(), |v| v["type"] = json!("no_such_event")),
        ("no type", token.clone(), |v| drop(v.as_object_mut().unwrap().remove("type"))),
        ("a type in the wrong case", token.clone(), |v| v["type"] = json!("Token")),
        ("a missing field", token.clone(), |v| drop(v.as_object_mut().unwrap().remove("text"))),
        ("a field of the wrong type", token.clone(), |v| v["text"] = json!(3)),
        ("not an object", token.clone(), |v| *v = json!(["token", "x"])),
        (
            "a header without its version",
            json!({"type": "header", "schema": 1, "producer": "axon"}),
            |v| drop(v.as_object_mut().unwrap().remove("schema")),
        ),
        ("a negative count", json!({"type": "turn_started", "turn": 1}), |v| v["turn"] = json!(-1)),
        ("an unknown stop reason", completed.clone(), |v| v["stop_reason"] = json!("finished")),
        ("usage without output_tokens", completed.clone(), |v| {
            drop(v["usage"].as_object_mut().unwrap().remove("output_tokens"))
        }),
        ("an unknown preview kind", approval.clone(), |v| v["preview"]["kind"] = json!("teleport")),
        ("a diff preview without its diff", approval.clone(), |v| {
            drop(v["preview"].as_object_mut().unwrap().remove("diff"))
        }),
        (
            "an unknown MCP state",
            json!({"type": "mcp_status", "server": "files", "state": "ready"}),
            |v| v["state"] = json!("sleeping"),
        ),
        ("a session_started without its tools", session.clone(), |v| {
            drop(v.as_object_mut().unwrap().remove("tools"))
        }),
        ("an unknown mode", session.clone(), |v| v["mode"] = json!("yolo")),
        ("an unknown content part", observation.clone(), |v| {
            v["output"]["content"][0] = json!({"type": "video", "data": ""})
        }),
    ];
    for (what, good, damage) in cases {
        let problems = violations(&schema, "type", &good);
        assert!(problems.is_empty(), "the intact event of '{what}' is refused: {problems:?}");
        let mut bad = good;
        damage(&mut bad);
        assert!(!validator.is_valid(&bad), "{what} was accepted: {bad}");
    }
}

/// The JSON lines of `docs/events.md`'s code blocks (lines that start with
/// `{"` inside a fence).
fn documented_lines(doc: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_fence = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if in_fence && line.starts_with("{\"") {
            lines.push(line.to_string());
        }
    }
    lines
}

#[test]
fn the_reference_documents_every_event_type_with_examples_the_schema_accepts() {
    let doc = std::fs::read_to_string(docs_dir().join("events.md")).unwrap();
    let schema = generated();
    let mut exemplified = BTreeSet::new();
    let op_schema = serde_json::to_value(schemars::schema_for!(Op)).unwrap();
    let mut exemplified_ops = BTreeSet::new();
    for line in documented_lines(&doc) {
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("docs/events.md has a line that is not JSON ({e}): {line}"));
        if value.get("op").is_some() {
            let problems = violations(&op_schema, "op", &value);
            assert!(problems.is_empty(), "an Op example is wrong: {line}\n{}", problems.join("\n"));
            exemplified_ops.insert(value["op"].as_str().unwrap().to_string());
            serde_json::from_value::<Op>(value).unwrap();
            continue;
        }
        let problems = violations(&schema, "type", &value);
        assert!(problems.is_empty(), "an event example is wrong: {line}\n{}", problems.join("\n"));
        serde_json::from_value::<AgentEvent>(value.clone()).unwrap();
        exemplified.insert(value["type"].as_str().unwrap().to_string());
    }
    for name in tag_names(&schema, "type") {
        assert!(doc.contains(&format!("### `{name}`")), "docs/events.md has no section `{name}`");
        assert!(exemplified.contains(&name), "docs/events.md has no example line of `{name}`");
    }
    for name in tag_names(&op_schema, "op") {
        assert!(
            exemplified_ops.contains(&name),
            "docs/events.md has no example of the `{name}` op"
        );
    }
    let header = serde_json::to_string(&AgentEvent::header("axon 0.1.0")).unwrap();
    assert!(doc.contains(&header), "docs/events.md does not show the header line {header}");
}
