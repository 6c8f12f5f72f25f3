//! `axon acp` spoken to in raw JSON-RPC lines, for what no SDK sends on
//! purpose: unknown methods, ill-typed params, lines that are not JSON,
//! unknown sessions; and for what a client cannot see through an SDK:
//! sessions in one process stay apart, and closing stdin ends the agent and
//! the commands it started.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use crate::common::{PATIENCE, Setup, eventually, setup};
use axon_testkit::Reply;
use serde_json::{Value, json};

/// `axon acp` with raw lines in and parsed lines out.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Every line read so far, for failure messages.
    seen: Vec<Value>,
    next_id: u64,
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Raw {
    /// Starts `axon acp` in the workspace and initializes it.
    fn start(s: &Setup) -> Raw {
        Raw::start_with(s, &[])
    }

    /// Starts `axon acp ARGS`.
    fn start_with(s: &Setup, args: &[&str]) -> Raw {
        Raw::start_without(s, args, &[])
    }

    /// Starts `axon acp ARGS` without the variables `unset`.
    fn start_without(s: &Setup, args: &[&str], unset: &[&str]) -> Raw {
        Raw::start_as(s, args, unset, json!({}))
    }

    /// Starts `axon acp ARGS` without `unset`, initialized by a client with
    /// `capabilities`.
    fn start_as(s: &Setup, args: &[&str], unset: &[&str], capabilities: Value) -> Raw {
        let mut command = s.std_command();
        for var in unset {
            command.env_remove(var);
        }
        command
            .arg("acp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw { child, stdin, lines, seen: Vec::new(), next_id: 100 };
        let init = raw.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        raw
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits for the response with its id.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.until(&format!("the response to {method}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// The next line `pred` accepts; fails after [`PATIENCE`].
    fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(value) => {
                    self.seen.push(value.clone());
                    if pred(&value) {
                        return value;
                    }
                }
                Err(e) => panic!("no {what} ({e}); seen: {:#?}", self.seen),
            }
        }
    }

    fn new_session(&mut self, s: &Setup) -> String {
        let cwd = s.workspace.path().canonicalize().unwrap();
        let response = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        response["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{response}")).to_string()
    }

    fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }
}

/// A request the agent still answers: it kept serving.
fn still_serving(raw: &mut Raw, s: &Setup) {
    let id = raw.new_session(s);
    assert!(!id.is_empty());
}

#[test]
fn an_unknown_method_is_method_not_found() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    let response = raw.request("session/teleport", json!({}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    still_serving(&mut raw, &s);
}

#[test]
fn an_ill_typed_cwd_is_invalid_params_naming_the_field() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    let response = raw.request("session/new", json!({"cwd": 5, "mcpServers": []}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("cwd"), "{response}");
    still_serving(&mut raw, &s);
}

#[test]
fn a_line_that_is_not_json_is_a_parse_error_and_serving_goes_on() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    raw.send_line("this is {not json");
    let response = raw.until("a parse error", |m| m.get("error").is_some());
    assert_eq!(response["error"]["code"], -32700, "{response}");
    assert_eq!(response["id"], Value::Null, "{response}");
    still_serving(&mut raw, &s);
}

#[test]
fn a_prompt_to_an_unknown_session_is_an_error_and_serving_goes_on() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    let response = raw.prompt("no-such-session", "hello?");
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("unknown session"), "{response}");
    still_serving(&mut raw, &s);
    assert!(s.server.requests().is_empty(), "the model was asked");
}

#[test]
fn two_sessions_in_one_process_do_not_share_a_conversation() {
    let s = setup(vec![Reply::text("first answer"), Reply::text("second answer")]);
    let mut raw = Raw::start(&s);
    let a = raw.new_session(&s);
    let b = raw.new_session(&s);
    assert_ne!(a, b);
    let first = raw.prompt(&a, "alpha-prompt-111");
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    let second = raw.prompt(&b, "beta-prompt-222");
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let asked = requests[1].to_string();
    assert!(asked.contains("beta-prompt-222"), "{asked}");
    assert!(!asked.contains("alpha-prompt-111") && !asked.contains("first answer"), "{asked}");
    // Each session's updates carry its own id.
    let b_texts: String = raw
        .seen
        .iter()
        .filter(|m| m["method"] == "session/update" && m["params"]["sessionId"] == b.as_str())
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(b_texts, "second answer");
}

/// The pids whose command line contains `marker` (the SDK tests use it too).
pub(crate) fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        // A process may end while it is read; then it is not there.
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn closing_stdin_ends_the_agent_and_the_command_it_runs() {
    // The marker is sleep's own argument (a unique fraction of a second),
    // so it is on the command line whether or not a shell stays in between.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let marker = format!("1000.{}{:09}", std::process::id(), nanos.subsec_nanos());
    let s = setup(vec![Reply::tool("shell", json!({"command": format!("sleep {marker}")}))]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    let mode = raw.request("session/set_mode", json!({"sessionId": session, "modeId": "auto"}));
    assert!(mode.get("result").is_some(), "{mode}");
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}})
        .to_string(),
    );
    let started = eventually(|| !processes_with(&marker).is_empty());
    assert!(started, "the sleep never started; seen: {:#?}", raw.seen);

    drop(raw.stdin.take());
    let exited = eventually(|| raw.child.try_wait().unwrap().is_some());
    let gone = eventually(|| processes_with(&marker).is_empty());
    // Whatever happened, end what this test started before judging.
    let left = processes_with(&marker);
    for pid in &left {
        let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(exited && gone, "after stdin closed: axon exited: {exited}; still running: {left:?}");
}

/// The agent message text of `session`'s updates seen so far.
fn said(raw: &Raw, session: &str) -> String {
    raw.seen
        .iter()
        .filter(|m| m["method"] == "session/update" && m["params"]["sessionId"] == session)
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect()
}

#[test]
fn the_editors_mcp_servers_start_with_the_session() {
    let s = setup(vec![Reply::text("ok")]);
    std::fs::write(s.workspace.path().join("notes.txt"), "served\n").unwrap();
    // An axon-aware client (the VS Code extension) asks for the servers' states.
    let mut raw = Raw::start_as(&s, &[], &[], json!({"_meta": {"axon": {"mcpServers": true}}}));
    let cwd = s.workspace.path().canonicalize().unwrap();
    // axon's own MCP server, as an editor would list any stdio server.
    let axon = assert_cmd::cargo::cargo_bin("axon");
    let server = json!({"name": "ws", "command": axon, "args": ["mcp", "serve", "-C", cwd],
                        "env": [{"name": "AXON_HOME", "value": s.home.path()}]});
    let response = raw.request("session/new", json!({"cwd": cwd, "mcpServers": [server]}));
    let session = response["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{response}"));
    let session = session.to_string();
    // Servers start in the background: `/mcp` says how each is doing now.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let shown = raw.prompt(&session, "/mcp");
        assert_eq!(shown["result"]["stopReason"], "end_turn", "{shown}");
        if said(&raw, &session).contains("- ws: ready (") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never ready: {:#?}", raw.seen);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let answer = raw.prompt(&session, "what tools?");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let offered = s.server.requests()[0]["tools"].to_string();
    assert!(offered.contains("mcp_ws_read_file"), "{offered}");
    // The extension notification an editor's panel shows states from: the
    // whole list, first as the session opened, then as the server got ready.
    let lists: Vec<&Value> = raw
        .seen
        .iter()
        .filter(|m| m["method"] == "_axon/mcp_servers" && m["params"]["sessionId"] == session)
        .map(|m| &m["params"]["servers"])
        .collect();
    assert!(lists.len() >= 2, "{:#?}", raw.seen);
    assert_eq!(lists[0][0]["name"], "ws");
    assert_eq!(lists[0][0]["state"], "connecting", "{lists:?}");
    assert!(lists.iter().any(|l| l[0]["state"] == "ready"), "{lists:?}");
    // Never before the answer that names the session.
    let first = raw.seen.iter().position(|m| m["method"] == "_axon/mcp_servers");
    let named = raw.seen.iter().position(|m| m["result"]["sessionId"] == session);
    assert!(first > named, "{:#?}", raw.seen);
}

#[test]
fn a_server_that_fails_at_once_is_shown_failed() {
    // It fails as the session opens, perhaps before the session's own
    // description goes out: the client's last list must still say so.
    let s = setup(vec![Reply::text("ok")]);
    std::fs::write(
        s.home.path().join("config.toml"),
        std::fs::read_to_string(s.home.path().join("config.toml")).unwrap_or_default()
            + "\n[mcp_servers.gone]\ncommand = \"/nonexistent/axon-test-server\"\n",
    )
    .unwrap();
    let mut raw = Raw::start_as(&s, &[], &[], json!({"_meta": {"axon": {"mcpServers": true}}}));
    let session = raw.new_session(&s);
    raw.until("the failed server in a list", |m| {
        m["method"] == "_axon/mcp_servers"
            && m["params"]["sessionId"] == session
            && m["params"]["servers"][0]["state"] == "error"
    });
}

#[test]
fn a_client_that_did_not_ask_hears_nothing_of_the_mcp_servers() {
    let s = setup(vec![Reply::text("ok")]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    let answer = raw.prompt(&session, "hello");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!raw.seen.iter().any(|m| m["method"] == "_axon/mcp_servers"), "{:#?}", raw.seen);
}

#[test]
fn authenticate_says_which_key_is_missing() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    let present = raw.request("authenticate", json!({"methodId": "openai"}));
    assert_eq!(present["result"], json!({}), "{present}");
    let missing = raw.request("authenticate", json!({"methodId": "deepseek"}));
    assert_eq!(missing["error"]["code"], -32000, "{missing}");
    assert!(
        missing["error"]["message"].as_str().unwrap().contains("DEEPSEEK_API_KEY"),
        "{missing}"
    );
    let unknown = raw.request("authenticate", json!({"methodId": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn the_iteration_limit_is_max_turn_requests() {
    let s = setup(vec![Reply::tool("list_dir", json!({"path": "."}))]);
    let mut raw = Raw::start_with(&s, &["--max-iterations", "1"]);
    let session = raw.new_session(&s);
    let answer = raw.prompt(&session, "look around");
    assert_eq!(answer["result"]["stopReason"], "max_turn_requests", "{answer}");
}

#[test]
fn linked_and_embedded_files_reach_the_model() {
    let s = setup(vec![Reply::text("read them")]);
    std::fs::write(s.workspace.path().join("linked.md"), "text-of-the-linked-file\n").unwrap();
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    let cwd = s.workspace.path().canonicalize().unwrap();
    let prompt = json!([
        {"type": "text", "text": "compare these"},
        {"type": "resource_link", "name": "linked.md", "uri": format!("file://{}/linked.md", cwd.display())},
        {"type": "resource", "resource": {"uri": format!("file://{}/unsaved.md", cwd.display()),
                                          "text": "text-of-an-unsaved-buffer"}},
        {"type": "resource_link", "name": "passwd", "uri": "file:///etc/passwd"}
    ]);
    let answer = raw.request("session/prompt", json!({"sessionId": session, "prompt": prompt}));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked = s.server.requests()[0]["messages"].to_string();
    assert!(asked.contains("text-of-the-linked-file"), "{asked}");
    assert!(asked.contains("text-of-an-unsaved-buffer"), "{asked}");
    assert!(!asked.contains("root:x:0:0"), "a file outside the workspace was read: {asked}");
}

#[test]
fn cancelling_while_permission_is_asked_cancels_the_prompt_and_runs_nothing() {
    let s = setup(vec![Reply::tool("write_file", json!({"path": "never.txt", "content": "x"}))]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}})
        .to_string(),
    );
    let asked = raw.until("a permission request", |m| m["method"] == "session/request_permission");
    raw.send_line(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            .to_string(),
    );
    let answer = raw.until("the prompt's answer", |m| m["id"] == 9 && m.get("method").is_none());
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The client answers its open question as the protocol says, late.
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}})
            .to_string(),
    );
    still_serving(&mut raw, &s);
    assert!(!s.workspace.path().join("never.txt").exists());
}

#[test]
fn a_line_that_is_not_utf8_is_a_parse_error_and_serving_goes_on() {
    let s = setup(vec![]);
    let mut raw = Raw::start(&s);
    let stdin = raw.stdin.as_mut().unwrap();
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}\n").unwrap();
    stdin.flush().unwrap();
    let response = raw.until("a parse error", |m| m.get("error").is_some());
    assert_eq!(response["error"]["code"], -32700, "{response}");
    still_serving(&mut raw, &s);
}

#[test]
fn prompts_sent_back_to_back_are_answered_in_order() {
    // Four characters: one streamed piece each.
    let s = setup(vec![Reply::text("ONE!"), Reply::text("TWO!")]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    for (id, text) in [(21, "first"), (22, "second")] {
        raw.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
            .to_string(),
        );
    }
    raw.until("the second answer", |m| m["id"] == 22 && m.get("method").is_none());
    // Each answer follows its own turn's text and comes before the next's.
    let position = |pred: &dyn Fn(&Value) -> bool| raw.seen.iter().position(pred).unwrap();
    let chunk = |text: &'static str| {
        move |m: &Value| {
            m["params"]["update"]["content"]["text"] == text
                && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        }
    };
    let first_text = position(&chunk("ONE!"));
    let first_answer = position(&|m: &Value| m["id"] == 21 && m.get("method").is_none());
    let second_text = position(&chunk("TWO!"));
    assert!(first_text < first_answer && first_answer < second_text, "{:#?}", raw.seen);
    let asked = s.server.requests()[1]["messages"].to_string();
    assert!(asked.contains("first") && asked.contains("second"), "{asked}");
}

#[test]
fn a_new_prompt_sets_an_unanswered_plan_aside() {
    let s = setup(vec![Reply::submit_plan(&["write the file"]), Reply::text("plain answer")]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    raw.request("session/set_mode", json!({"sessionId": session, "modeId": "plan"}));
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 31, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "plan it"}]}})
        .to_string(),
    );
    let asked = raw.until("the plan question", |m| m["method"] == "session/request_permission");
    let card = asked["params"]["toolCall"]["toolCallId"].clone();
    raw.request("session/set_mode", json!({"sessionId": session, "modeId": "ask"}));
    let answer = raw.prompt(&session, "never mind, just answer");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let first = raw.seen.iter().find(|m| m["id"] == 31 && m.get("method").is_none()).cloned();
    assert_eq!(first.unwrap_or_default()["result"]["stopReason"], "end_turn", "{:#?}", raw.seen);
    let failed = raw.seen.iter().any(|m| {
        m["params"]["update"]["toolCallId"] == card && m["params"]["update"]["status"] == "failed"
    });
    assert!(failed, "the plan card was not closed: {:#?}", raw.seen);
    assert!(said(&raw, &session).contains("plain answer"));
    // The user's answer to the old question, late, changes nothing.
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": asked["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "run"}}})
        .to_string(),
    );
    still_serving(&mut raw, &s);
    assert_eq!(s.server.requests().len(), 2, "the set-aside plan ran");
}

#[test]
fn a_session_is_loaded_by_its_exact_id_only() {
    let s = setup(vec![Reply::text("saved")]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    raw.prompt(&session, "remember this");
    let cwd = s.workspace.path().canonicalize().unwrap();
    let prefix = &session[..8];
    let response =
        raw.request("session/load", json!({"sessionId": prefix, "cwd": cwd, "mcpServers": []}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let response =
        raw.request("session/load", json!({"sessionId": session, "cwd": cwd, "mcpServers": []}));
    assert!(response.get("result").is_some(), "{response}");
}

#[test]
fn paths_sent_to_the_editor_are_under_the_folder_it_named() {
    let s = setup(vec![Reply::tool("read_file", json!({"path": "a.txt"})), Reply::text("ok")]);
    std::fs::write(s.workspace.path().join("a.txt"), "a\n").unwrap();
    let links = tempfile::tempdir().unwrap();
    let named = links.path().join("project");
    std::os::unix::fs::symlink(s.workspace.path(), &named).unwrap();
    let mut raw = Raw::start(&s);
    let response = raw.request("session/new", json!({"cwd": named, "mcpServers": []}));
    let session = response["result"]["sessionId"].as_str().unwrap().to_string();
    raw.prompt(&session, "read a.txt");
    let call = raw
        .seen
        .iter()
        .find(|m| m["params"]["update"]["sessionUpdate"] == "tool_call")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        call["params"]["update"]["locations"][0]["path"],
        json!(named.join("a.txt")),
        "{call}"
    );
}

#[test]
fn images_are_offered_only_for_a_model_that_takes_them() {
    let s = setup(vec![]);
    let image = |raw: &Raw| {
        raw.seen[0]["result"]["agentCapabilities"]["promptCapabilities"]["image"].clone()
    };
    let raw = Raw::start(&s);
    assert_eq!(image(&raw), json!(true), "{:#?}", raw.seen);
    let raw = Raw::start_with(&s, &["--model", "deepseek-chat"]);
    assert_eq!(image(&raw), json!(false), "{:#?}", raw.seen);
}

#[test]
fn two_plan_prompts_back_to_back_are_each_answered_once() {
    let s = setup(vec![Reply::submit_plan(&["first plan"]), Reply::submit_plan(&["second plan"])]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    raw.request("session/set_mode", json!({"sessionId": session, "modeId": "plan"}));
    for (id, text) in [(41, "plan one"), (42, "plan two")] {
        raw.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
            .to_string(),
        );
    }
    // The first was overtaken by the second: answered, never asked about.
    let first = raw.until("the first answer", |m| m["id"] == 41 && m.get("method").is_none());
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    let asked = raw.until("the plan question", |m| m["method"] == "session/request_permission");
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": asked["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "keep"}}})
        .to_string(),
    );
    let second = raw.until("the second answer", |m| m["id"] == 42 && m.get("method").is_none());
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    still_serving(&mut raw, &s);
    let answers =
        raw.seen.iter().filter(|m| m.get("method").is_none() && (m["id"] == 41 || m["id"] == 42));
    assert_eq!(answers.count(), 2, "{:#?}", raw.seen);
    let questions = raw.seen.iter().filter(|m| m["method"] == "session/request_permission");
    assert_eq!(questions.count(), 1, "{:#?}", raw.seen);
}

#[test]
fn a_mode_switch_right_before_a_prompt_applies_to_it() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "w.txt", "content": "x"})),
        Reply::text("ok"),
    ]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    for line in [
        json!({"jsonrpc": "2.0", "id": 51, "method": "session/set_mode",
               "params": {"sessionId": session, "modeId": "auto"}}),
        json!({"jsonrpc": "2.0", "id": 52, "method": "session/prompt",
               "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}}),
    ] {
        raw.send_line(&line.to_string());
    }
    let answer = raw.until("the answer", |m| m["id"] == 52 && m.get("method").is_none());
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        !raw.seen.iter().any(|m| m["method"] == "session/request_permission"),
        "{:#?}",
        raw.seen
    );
    assert!(s.workspace.path().join("w.txt").exists());
}

#[test]
fn reject_always_holds_after_a_switch_to_auto() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "a"})),
        Reply::text("not written"),
        Reply::tool("write_file", json!({"path": "b.txt", "content": "b"})),
        Reply::text("still not"),
    ]);
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 61, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write a"}]}})
        .to_string(),
    );
    let asked = raw.until("a permission request", |m| m["method"] == "session/request_permission");
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": asked["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "reject_always"}}})
        .to_string(),
    );
    raw.until("the first answer", |m| m["id"] == 61 && m.get("method").is_none());
    raw.request("session/set_mode", json!({"sessionId": session, "modeId": "auto"}));
    let answer = raw.prompt(&session, "write b");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let questions = raw.seen.iter().filter(|m| m["method"] == "session/request_permission");
    assert_eq!(questions.count(), 1);
    assert!(
        !s.workspace.path().join("a.txt").exists() && !s.workspace.path().join("b.txt").exists()
    );
}

#[test]
fn a_session_without_its_key_is_auth_required() {
    let s = setup(vec![]);
    let mut raw = Raw::start_without(&s, &[], &["OPENAI_API_KEY"]);
    let cwd = s.workspace.path().canonicalize().unwrap();
    let response = raw.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    assert_eq!(response["error"]["code"], -32000, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("OPENAI_API_KEY"), "{response}");
}

#[test]
fn the_usage_update_carries_the_session_s_cost_so_far() {
    let s = setup(vec![Reply::text("one"), Reply::text("two")]);
    // Each scripted call (12 input, 7 output tokens) costs $0.026 here.
    std::fs::write(
        s.home.path().join("config.toml"),
        "model = \"priced-model\"\n[prices.\"priced-model\"]\ninput = 1000.0\noutput = 2000.0\n",
    )
    .unwrap();
    let mut raw = Raw::start(&s);
    let session = raw.new_session(&s);
    for text in ["first", "second"] {
        let answer = raw.prompt(&session, text);
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    let costs: Vec<(f64, String)> = raw
        .seen
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "usage_update")
        .map(|m| &m["params"]["update"]["cost"])
        .map(|c| (c["amount"].as_f64().unwrap(), c["currency"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert!((costs[0].0 - 0.026).abs() < 1e-9 && (costs[1].0 - 0.052).abs() < 1e-9, "{costs:?}");
    assert!(costs.iter().all(|(_, currency)| currency == "USD"));
    drop(raw);

    // Loaded again by another editor: before anything is said, its meter
    // hears what the session spent so far, not zero.
    let mut raw = Raw::start(&s);
    let cwd = s.workspace.path().canonicalize().unwrap();
    let loaded =
        raw.request("session/load", json!({"sessionId": session, "cwd": cwd, "mcpServers": []}));
    assert!(loaded.get("result").is_some(), "{loaded}");
    let update = raw.until("the loaded session's usage_update", |m| {
        m["params"]["update"]["sessionUpdate"] == "usage_update"
    });
    let amount = update["params"]["update"]["cost"]["amount"].as_f64().unwrap();
    assert!((amount - 0.052).abs() < 1e-9, "{update}");
}
