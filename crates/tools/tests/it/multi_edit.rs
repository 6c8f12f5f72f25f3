//! `multi_edit`: several of `edit_file`'s replacements in one file, each
//! on the text the ones before it left, written once and all or none.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{TestWorkspace, expect_error, expect_ok};
use axon_protocol::Preview;
use serde_json::json;

#[test]
fn edits_apply_in_order_each_to_the_text_the_last_left() {
    let ws = TestWorkspace::code();
    ws.write("lib.rs", "fn alpha() {}\nfn beta() {}\n");
    let output = expect_ok(&ws.call(
        "multi_edit",
        json!({"path": "lib.rs", "edits": [
            {"old_str": "fn alpha() {}", "new_str": "fn gamma() {}"},
            // Matches only what the first edit wrote.
            {"old_str": "fn gamma() {}\nfn beta", "new_str": "fn gamma() {}\n\nfn beta"},
        ]}),
    ));
    assert_eq!(ws.read("lib.rs"), "fn gamma() {}\n\nfn beta() {}\n");
    assert!(output.starts_with("Edited 'lib.rs' (2 replacements)"), "{output}");
    assert!(output.contains("-fn alpha() {}") && output.contains("+fn gamma() {}"), "{output}");
}

#[test]
fn one_edit_that_cannot_be_made_leaves_the_file_untouched_and_is_named() {
    let ws = TestWorkspace::code();
    ws.write("notes.txt", "one\ntwo\nthree\n");
    let message = expect_error(&ws.call(
        "multi_edit",
        json!({"path": "notes.txt", "edits": [
            {"old_str": "one", "new_str": "ONE"},
            {"old_str": "tw0", "new_str": "TWO"},
        ]}),
    ));
    assert!(message.starts_with("edit 2 of 2: No match for old_str in 'notes.txt'."), "{message}");
    assert!(message.contains("2 | two"), "the closest line is shown: {message}");
    assert_eq!(ws.read("notes.txt"), "one\ntwo\nthree\n", "nothing was written");

    let message = expect_error(&ws.call(
        "multi_edit",
        json!({"path": "notes.txt", "edits": [
            {"old_str": "o", "new_str": "0"},
        ]}),
    ));
    assert!(message.contains("matches 2 times") && message.contains("lines 1, 2"), "{message}");
    let message = expect_error(&ws.call("multi_edit", json!({"path": "notes.txt", "edits": []})));
    assert!(message.contains("no edits given"), "{message}");
    let message = expect_error(&ws.call(
        "multi_edit",
        json!({"path": "notes.txt", "edits": [
            {"old_str": "one", "new_str": "uno"},
            {"old_str": "uno", "new_str": "one"},
        ]}),
    ));
    assert!(message.contains("leave 'notes.txt' as it was"), "{message}");
    assert_eq!(ws.read("notes.txt"), "one\ntwo\nthree\n");
}

#[test]
fn crlf_stays_crlf_and_replace_all_works_per_edit() {
    let ws = TestWorkspace::code();
    ws.write("dos.txt", "a = 1\r\nb = 1\r\nc = 2\r\n");
    expect_ok(&ws.call(
        "multi_edit",
        json!({"path": "dos.txt", "edits": [
            {"old_str": "= 1", "new_str": "= 10", "replace_all": true},
            {"old_str": "c = 2\n", "new_str": "c = 20\nd = 30\n"},
        ]}),
    ));
    assert_eq!(ws.read("dos.txt"), "a = 10\r\nb = 10\r\nc = 20\r\nd = 30\r\n");
}

#[test]
fn the_preview_is_the_diff_of_every_edit_together_or_the_refusal() {
    let ws = TestWorkspace::code();
    ws.write("app.py", "x = 1\ny = 2\n");
    let registry = axon_tools::Profile::Code.registry();
    let ctx = axon_tools::ToolContext::new(axon_tools::Workspace::new(ws.root()).unwrap());
    let args = json!({"path": "app.py", "edits": [
        {"old_str": "x = 1", "new_str": "x = 10"},
        {"old_str": "y = 2", "new_str": "y = 20"},
    ]});
    match registry.preview(&ctx, "multi_edit", &args) {
        Preview::Diff { path, diff, created: false } => {
            assert_eq!(path, "app.py");
            assert!(diff.contains("+x = 10") && diff.contains("+y = 20"), "{diff}");
        }
        other => panic!("expected a diff, got {other:?}"),
    }
    assert_eq!(ws.read("app.py"), "x = 1\ny = 2\n", "a preview writes nothing");
    let bad = json!({"path": "app.py", "edits": [{"old_str": "z", "new_str": "w"}]});
    assert!(matches!(registry.preview(&ctx, "multi_edit", &bad), Preview::Invalid { .. }));
}
