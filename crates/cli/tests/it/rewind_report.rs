//! What a rewind tells the user, through the binary (issue 31 §1): the undo
//! it names is a whole command that works from any folder; a turn whose
//! only write was refused is not listed as having changed files; and
//! `axon sessions list|show|export` mark the turns a rewind took back
//! instead of printing and counting them as the conversation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Setup, setup};
use axon_testkit::Reply;
use serde_json::json;

fn stdout(s: &Setup, args: &[&str]) -> String {
    let output = s.axon().args(args).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "axon {args:?} failed:\n{text}\n{err}");
    text
}

/// The command quoted in backticks after `undo with `.
fn undo_command(report: &str) -> Vec<String> {
    let command = report
        .split("undo with `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no undo command in {report}"));
    command.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_undo_a_rewind_names_runs_as_printed_from_another_folder() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "model\n"})),
        Reply::text("written"),
    ]);
    let ws = s.workspace.path();
    std::fs::write(ws.join("a.txt"), "mine\n").unwrap();
    stdout(&s, &["run", "--yes", "write a"]);
    let report = stdout(&s, &["rewind"]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "mine\n", "{report}");

    let command = undo_command(&report);
    assert_eq!(command[..2], ["axon", "rewind"], "{report}");
    // Pasted where the user happens to be: not the workspace.
    let elsewhere = tempfile::tempdir().unwrap();
    let output = s.axon().current_dir(elsewhere.path()).args(&command[1..]).output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{command:?} failed: {err}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "model\n");
}

#[test]
fn a_turn_whose_only_write_was_refused_changed_no_files() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "model\n"})),
        Reply::text("could not write"),
        Reply::tool("write_file", json!({"path": "b.txt", "content": "model\n"})),
        Reply::text("written"),
    ]);
    // Nobody to approve: the write is refused.
    let refused = s.axon().args(["run", "refused write"]).output().unwrap();
    assert!(!s.workspace.path().join("a.txt").exists());
    assert!(refused.status.code().is_some());
    stdout(&s, &["run", "--yes", "--continue", "real write"]);
    assert!(s.workspace.path().join("b.txt").exists());

    let turns = stdout(&s, &["rewind", "--list"]);
    let line = |prompt: &str| {
        turns.lines().find(|l| l.contains(prompt)).unwrap_or_else(|| panic!("{turns}")).to_string()
    };
    assert!(line("refused write").contains("no file changes"), "{turns}");
    assert!(line("real write").contains("changed files"), "{turns}");
}

#[test]
fn sessions_mark_and_do_not_count_the_turns_a_rewind_took_back() {
    let s = setup(vec![Reply::text("one"), Reply::text("two"), Reply::text("three")]);
    stdout(&s, &["run", "first question"]);
    stdout(&s, &["run", "--continue", "second question"]);
    stdout(&s, &["run", "--continue", "third question"]);
    let before = stdout(&s, &["sessions", "list"]);
    assert!(before.contains("   6 msgs"), "{before}");

    let report = stdout(&s, &["rewind", "--turn", "2"]);
    assert!(report.contains("4 messages taken back"), "{report}");
    let id = report.lines().last().unwrap().trim_start_matches("session ").to_string();

    let list = stdout(&s, &["sessions", "list"]);
    assert!(list.contains("   2 msgs"), "only the first turn is left: {list}");
    assert!(list.contains("4 undone by a rewind"), "{list}");

    let shown = stdout(&s, &["sessions", "show", &id]);
    let first = shown.find("first question").unwrap();
    let mark = shown.find("Undone by a rewind").unwrap_or_else(|| panic!("{shown}"));
    let second = shown.find("second question").unwrap();
    assert!(first < mark && mark < second, "the mark comes before the undone turns: {shown}");
    assert!(shown.contains("## Turn 2: user (undone)"), "{shown}");
    assert!(shown.contains("## Turn 3: user (undone)"), "{shown}");
    assert!(!shown.contains("## Turn 1: user (undone)"), "{shown}");

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&s, &["sessions", "export", &id, "--format", "json"]))
            .unwrap();
    assert_eq!(json["metadata"]["extra"]["undone_messages"], json!([2, 3, 4, 5]), "{json}");
}
