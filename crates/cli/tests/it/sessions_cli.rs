//! Sessions end to end: every run is saved, listed, shown, exported,
//! continued and compacted; secrets stay out; and `kill -9` at any moment
//! leaves a session that opens and resumes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use crate::common::{Setup, setup};
use axon_testkit::Reply;
use serde_json::{Value, json};

fn stdout(s: &Setup, args: &[&str]) -> String {
    let output = s.axon().args(args).assert().success().get_output().clone();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn session_ids(s: &Setup) -> Vec<String> {
    stdout(s, &["sessions", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

fn session_files(s: &Setup) -> Vec<std::path::PathBuf> {
    let dir = s.home.path().join("data/sessions");
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Session files whose header line is whole: a kill between creating the
/// file and writing that line leaves an empty file, which is rightly not a
/// session to continue.
fn headed_sessions(s: &Setup) -> usize {
    session_files(s).iter().filter(|p| std::fs::read(p).is_ok_and(|b| b.contains(&b'\n'))).count()
}

/// Every tool call in a request's messages has its result after it.
fn calls_all_answered(request: &Value) -> bool {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().enumerate().all(|(i, m)| {
        m["tool_calls"].as_array().is_none_or(|calls| {
            calls.iter().all(|c| messages[i + 1..].iter().any(|r| r["tool_call_id"] == c["id"]))
        })
    })
}

#[test]
fn a_run_is_saved_listed_shown_exported_and_removed() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "a.md", "content": "hi\n"})),
        Reply::text("a.md written."),
    ]);
    s.axon().args(["run", "--yes", "write a.md\nsaying hi"]).assert().success();
    let ids = session_ids(&s);
    assert_eq!(ids.len(), 1);
    let listing = stdout(&s, &["sessions", "list"]);
    assert!(listing.contains("write a.md") && listing.contains("4 msgs"), "{listing}");

    let shown = stdout(&s, &["sessions", "show", &ids[0][..12]]);
    assert!(shown.contains("## Turn 1: user") && shown.contains("a.md written."), "{shown}");
    assert!(shown.contains("**Tool call** `write_file`") && shown.contains("```json"), "{shown}");

    let json: Value =
        serde_json::from_str(&stdout(&s, &["sessions", "export", &ids[0], "--format", "json"]))
            .unwrap();
    assert_eq!(json["messages"].as_array().unwrap().len(), 4);
    assert_eq!(json["metadata"]["tools_used"], json!(["write_file"]));
    assert!(json["metadata"]["total_tokens"].as_u64().unwrap() > 0);

    s.axon().args(["sessions", "rm", &ids[0]]).assert().success();
    assert!(session_ids(&s).is_empty());
    s.axon().args(["sessions", "show", "nope"]).assert().code(2);
}

#[test]
fn continue_and_resume_send_the_earlier_conversation() {
    let s = setup(vec![
        Reply::text("the answer is 42"),
        Reply::text("you asked about 42"),
        Reply::text("still 42"),
    ]);
    s.axon().args(["run", "what is the answer?"]).assert().success();
    s.axon()
        .args(["run", "--continue", "what did I ask?"])
        .assert()
        .success()
        .stdout("you asked about 42\n");
    let second = s.server.requests()[1].to_string();
    assert!(
        second.contains("what is the answer?") && second.contains("the answer is 42"),
        "{second}"
    );
    let id = session_ids(&s).remove(0);
    // Another model: the session opens with the one configured now.
    s.axon()
        .args(["run", "--model", "other-model", "--resume", &id, "and now?"])
        .assert()
        .success();
    let third = &s.server.requests()[2];
    assert_eq!(third["model"], "other-model");
    assert!(third.to_string().contains("what did I ask?"));
    assert_eq!(session_ids(&s).len(), 1, "continuing adds to the same session");
    s.axon()
        .args(["run", "--resume", "zzz", "x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no session matches 'zzz'"));
}

#[test]
fn a_damaged_session_still_resumes_with_a_warning() {
    let s = setup(vec![Reply::text("one"), Reply::text("two")]);
    s.axon().args(["run", "first"]).assert().success();
    let file = session_files(&s).remove(0);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"mess");
    std::fs::write(&file, text).unwrap();
    s.axon()
        .args(["run", "--continue", "second"])
        .assert()
        .success()
        .stderr(predicates::str::contains("last line was cut off"));
    assert!(s.server.requests()[1].to_string().contains("first"));
}

#[test]
fn the_api_key_never_reaches_the_session_file() {
    let s = setup(vec![
        Reply::tool(
            "shell",
            json!({"command": "echo the key is $OPENAI_API_KEY; echo Authorization: Bearer abcdefghijklmnopqrstu"}),
        ),
        Reply::text("done"),
    ]);
    s.axon().args(["run", "--yes", "show me the key"]).assert().success();
    let text = std::fs::read_to_string(session_files(&s).remove(0)).unwrap();
    // The command never had the key (issue 13): nothing to print or redact.
    assert!(text.contains(r"the key is\n"), "{text}");
    assert!(
        !text.contains("sk-test-0000000000") && !text.contains("abcdefghijklmnopqrstu"),
        "{text}"
    );
}

#[test]
fn compacting_replaces_old_turns_in_what_is_sent() {
    let s = setup(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("SUMMARY: the user asked two things."),
        Reply::text("third answer"),
    ]);
    s.axon().args(["run", "question one"]).assert().success();
    s.axon().args(["run", "--continue", "question two"]).assert().success();
    let id = session_ids(&s).remove(0);
    s.axon()
        .args(["run", "--compact", &id])
        .assert()
        .success()
        .stderr(predicates::str::contains("summarised the session's oldest 2 messages"));
    let summary_request = s.server.requests()[2].to_string();
    assert!(
        summary_request.contains("question one") && summary_request.contains("handoff"),
        "{summary_request}"
    );
    s.axon().args(["run", "--resume", &id, "question three"]).assert().success();
    let sent = s.server.requests()[3].to_string();
    assert!(sent.contains("SUMMARY: the user asked two things."), "{sent}");
    assert!(!sent.contains("question one") && sent.contains("question two"), "{sent}");
    // The file keeps every original message.
    let file = std::fs::read_to_string(session_files(&s).remove(0)).unwrap();
    assert!(file.contains("question one") && file.contains("\"type\":\"compaction\""));
}

#[cfg(unix)]
#[test]
fn kill_9_at_any_moment_leaves_a_session_that_opens_and_resumes() {
    let s = setup(Vec::new());
    let mut interrupted = 0;
    for round in 0..12u64 {
        let mut batch: Vec<Reply> = (0..15)
            .map(|n| Reply::tool("shell", json!({"command": format!("sleep 0.03; echo step {n}")})))
            .collect();
        batch.push(Reply::text("finished"));
        s.server.push(batch);
        let sessions_before = headed_sessions(&s);
        let mut child = s
            .std_command()
            .args(["run", "--yes", &format!("long task {round}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A kill before the session exists leaves nothing to resume; wait
        // for it (however slow the machine), then pick a different moment
        // each round: just started, mid-stream, mid-tool. Whatever the
        // moment, the session must open and resume.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while headed_sessions(&s) == sessions_before {
            assert!(std::time::Instant::now() < deadline, "round {round}: no session was made");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(round * 37 % 400));
        let _ = child.kill();
        let _ = child.wait();
        for id in session_ids(&s) {
            s.axon().args(["sessions", "show", &id]).assert().success();
        }
        if s.server.remaining() == 0 {
            // The run finished before the kill: the resumed one gets its own answer.
            s.server.push([Reply::text("finished")]);
        } else {
            interrupted += 1;
        }
        let before = s.server.requests().len();
        s.axon()
            .args(["run", "--yes", "--continue", "go on"])
            .assert()
            .success()
            .stdout(predicates::str::ends_with("finished\n"));
        let requests = s.server.requests();
        for request in &requests[before..] {
            assert!(calls_all_answered(request), "round {round}: {request}");
        }
    }
    assert!(interrupted >= 6, "only {interrupted} of 12 runs were killed mid-run");
}

#[test]
fn show_gives_the_session_s_cost_from_its_recorded_calls() {
    let s = setup(vec![Reply::tool("glob", json!({"pattern": "*"})), Reply::text("done")]);
    s.axon().args(["run", "list"]).assert().success();
    let ids = session_ids(&s);
    // Unpriced when run: no cost is made up.
    s.axon()
        .args(["sessions", "show", &ids[0]])
        .assert()
        .success()
        .stderr(predicates::str::contains("cost unknown"));
    // Priced by the model it ran with: two calls of 12 input and 7 output
    // tokens at $1000/M and $2000/M.
    let model = stdout(&s, &["sessions", "export", &ids[0], "--format", "json"]);
    let model: Value = serde_json::from_str(&model).unwrap();
    let model = model["metadata"]["model"].as_str().unwrap_or("gpt-4o").to_string();
    std::fs::write(
        s.home.path().join("config.toml"),
        format!("[prices.\"{model}\"]\ninput = 1000.0\noutput = 2000.0\n"),
    )
    .unwrap();
    s.axon()
        .args(["sessions", "show", &ids[0]])
        .assert()
        .success()
        .stderr(predicates::str::contains("cost $0.0520"));
}
