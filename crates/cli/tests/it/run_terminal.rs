//! `axon run` at a real terminal (tmux) against the scripted model: the
//! answer rendered as Markdown (plain text on a pipe), an approval prompt
//! that shows what the call would do and says that "always" saves its
//! rule, and `axon permissions list|rm` to see and revoke that rule.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::{Setup, setup};
use assert_cmd::cargo::cargo_bin;
use axon_testkit::Reply;
use serde_json::json;

fn quote(path: &std::path::Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// `axon ARGS` in a tmux terminal of its own, configured as [`Setup`]
/// does; the screen says RUN-ENDED when it is over.
fn at_a_terminal(s: &Setup, name: &str, args: &str) -> common::tmux::Tmux {
    let command = format!(
        "cd {} && env -i PATH=\"$PATH\" TERM=xterm-256color AXON_HOME={} AXON_PROVIDER=openai \
         AXON_BASE_URL={} OPENAI_API_KEY=sk-test-0000000000 {} {args} \
         ; echo RUN-ENDED; sleep 120",
        quote(s.workspace.path()),
        quote(s.home.path()),
        s.server.openai_base(),
        quote(&cargo_bin("axon")),
    );
    let tmux = common::tmux::Tmux::new(format!("axon-{name}-{}", std::process::id()));
    let started = tmux.run(&["new-session", "-d", "-s", "axon", "-x", "100", "-y", "40", &command]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    tmux
}

const ANSWER: &str =
    "# Findings\n\nThe loader is **fine**.\n\n- one `item`\n- two\n\n```sh\ncargo test\n```";

#[test]
fn at_a_terminal_the_answer_is_rendered_markdown_and_on_a_pipe_the_plain_text() {
    let s = setup(vec![Reply::text(ANSWER), Reply::text(ANSWER)]);
    let tmux = at_a_terminal(&s, "markdown", "run 'what did you find?'");
    let screen = tmux.wait_for(&["RUN-ENDED"]);
    assert!(screen.contains("Findings"), "{screen}");
    assert!(screen.contains("The loader is fine."), "{screen}");
    assert!(screen.contains("cargo test"), "{screen}");
    for markup in ["# Findings", "**fine**", "`item`", "```"] {
        assert!(!screen.contains(markup), "{markup} is rendered, not shown: {screen}");
    }

    let output = s.axon().args(["run", "again"]).assert().success().get_output().clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{ANSWER}\n"));
}

#[test]
fn the_approval_shows_the_change_and_always_says_it_saves_a_rule_that_permissions_rm_revokes() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "notes.md", "content": "hello there\n"})),
        Reply::text("Written."),
    ]);
    let tmux = at_a_terminal(&s, "approve", "run 'write notes.md'");
    let screen = tmux.wait_for(&["Allow write_file: create notes.md?", "[a]lways"]);
    assert!(screen.contains("+hello there"), "the diff is shown: {screen}");
    assert!(!screen.contains(r#"{"path""#), "no raw arguments: {screen}");
    let unwrapped = screen.replace('\n', "");
    assert!(
        unwrapped.contains("saved for this workspace's later sessions too; `axon permissions rm`"),
        "{screen}"
    );
    tmux.keys(&["a", "Enter"]);
    tmux.wait_for(&["Written.", "RUN-ENDED"]);
    assert!(s.workspace.path().join("notes.md").exists());

    let list = s.axon().args(["permissions", "list"]).assert().success().get_output().clone();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(list.contains("    1  allow  write_file(notes.md)"), "{list}");
    assert!(list.contains("axon permissions rm N"), "{list}");

    let removed = s.axon().args(["permissions", "rm", "1"]).assert().success().get_output().clone();
    let removed = String::from_utf8_lossy(&removed.stdout).to_string();
    assert!(removed.contains("removed: allow write_file(notes.md)"), "{removed}");
    let list = s.axon().args(["permissions", "list"]).assert().success().get_output().clone();
    assert!(String::from_utf8_lossy(&list.stdout).starts_with("No rules saved for this workspace"));

    let again = s.axon().args(["permissions", "rm", "1"]).assert().code(1).get_output().clone();
    let error = String::from_utf8_lossy(&again.stderr).to_string();
    assert!(error.contains("no saved rule `1`") && error.contains("no rules are saved"), "{error}");
}
