//! The workspace boundary, case by case: every way out (`..`, absolute
//! paths, symlinks to outside files and folders, dangling and looping links,
//! NUL bytes, overlong names) against every tool that takes a path. Each
//! must be refused, and nothing outside the workspace may be read or
//! changed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;

use crate::common::{TestWorkspace, expect_error, expect_ok};
use serde_json::{Value, json};

const SECRET: &str = "TOP-SECRET-OUTSIDE";

/// A code workspace with an outside folder holding a secret, and links
/// from inside the workspace pointing out.
fn hostile_workspace() -> TestWorkspace {
    let ws = TestWorkspace::code();
    let outside = ws.outside().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join("secret.md"), SECRET).unwrap();
    symlink(&outside, ws.path("link_dir")).unwrap();
    symlink(outside.join("secret.txt"), ws.path("link_file")).unwrap();
    symlink(outside.join("secret.md"), ws.path("link_note.md")).unwrap();
    symlink(outside.join("missing.txt"), ws.path("dangling")).unwrap();
    symlink(ws.path("loop_b"), ws.path("loop_a")).unwrap();
    symlink(ws.path("loop_a"), ws.path("loop_b")).unwrap();
    ws.write("inside/ok.txt", "fine");
    symlink(ws.path("inside"), ws.path("link_inside")).unwrap();
    ws
}

/// Paths that must be refused, with a word the refusal must contain.
fn escaping_paths(ws: &TestWorkspace) -> Vec<(String, &'static str)> {
    let outside = ws.outside().join("outside");
    vec![
        ("..".into(), "outside the workspace"),
        ("../outside/secret.txt".into(), "outside the workspace"),
        ("inside/../../outside/secret.txt".into(), "outside the workspace"),
        ("./../../../../etc/passwd".into(), "outside the workspace"),
        (outside.join("secret.txt").display().to_string(), "outside the workspace"),
        ("/etc/passwd".into(), "outside the workspace"),
        ("link_dir".into(), "outside the workspace"),
        ("link_dir/secret.txt".into(), "outside the workspace"),
        ("link_dir/new/deeper.txt".into(), "outside the workspace"),
        ("link_file".into(), "outside the workspace"),
        ("dangling".into(), "symlink whose target does not exist"),
        ("loop_a".into(), "symlink loop"),
        ("loop_a/x.txt".into(), "symlink loop"),
        ("inside/\0/x".into(), "NUL"),
        (format!("inside/{}", "n".repeat(300)), "longer than 255"),
        ("a/".repeat(2100), "longer than 4096"),
    ]
}

/// One call per tool that takes a path, aimed at `path`.
fn calls_at(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("write_file", json!({"path": path, "content": "overwritten"})),
        ("write_file", json!({"path": path, "content": "appended", "mode": "append"})),
        ("edit_file", json!({"path": path, "old_str": SECRET, "new_str": "edited"})),
        ("list_dir", json!({"path": path})),
        ("search", json!({"query": SECRET, "path": path})),
        ("glob", json!({"pattern": "*", "path": path})),
        ("shell", json!({"command": "echo pwned > pwned.txt", "workdir": path})),
    ]
}

#[test]
fn every_escape_is_refused_by_every_tool_and_nothing_outside_changes() {
    let ws = hostile_workspace();
    let before = ws.snapshot();
    for (path, reason) in escaping_paths(&ws) {
        for (tool, args) in calls_at(&path) {
            let message = expect_error(&ws.call(tool, args));
            assert!(
                message.contains(reason),
                "{tool} on {:?}: expected '{reason}' in: {message}",
                path.chars().take(60).collect::<String>()
            );
            assert!(!message.contains(SECRET), "{tool} leaked the secret for {path:?}");
        }
    }
    assert_eq!(ws.snapshot(), before, "a refused call changed the filesystem");
    assert_eq!(std::fs::read_to_string(ws.outside().join("outside/secret.txt")).unwrap(), SECRET);
}

#[test]
fn vault_tools_refuse_the_same_escapes() {
    let ws = TestWorkspace::vault();
    let outside = ws.outside().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), SECRET).unwrap();
    symlink(&outside, ws.path("link_dir")).unwrap();
    symlink(outside.join("secret.md"), ws.path("link_note.md")).unwrap();
    let before = ws.snapshot();
    // Note tools add `.md`, so they aim at notes; list_folder at folders.
    let notes = ["../outside/secret", "link_dir/secret", "link_note", "a/../../outside/secret"];
    let folders = ["../outside", "link_dir", "a/../../outside", "link_note.md", "/../outside"];
    let calls = notes
        .iter()
        .flat_map(|p| {
            [
                ("read_note", json!({"path": p})),
                ("create_note", json!({"path": p, "content": "x"})),
                ("create_note", json!({"path": p, "content": "x", "mode": "append"})),
            ]
        })
        .chain(folders.iter().map(|p| ("list_folder", json!({"path": p}))));
    for (tool, args) in calls {
        let message = expect_error(&ws.call(tool, args.clone()));
        assert!(message.contains("outside the workspace"), "{tool} {args}: {message}");
    }
    assert_eq!(ws.snapshot(), before);
}

#[test]
fn links_that_stay_inside_work() {
    let ws = hostile_workspace();
    assert_eq!(expect_ok(&ws.call("read_file", json!({"path": "link_inside/ok.txt"}))), "1 | fine");
    let absolute = ws.path("inside/ok.txt").display().to_string();
    assert_eq!(expect_ok(&ws.call("read_file", json!({"path": absolute}))), "1 | fine");
    expect_ok(&ws.call("write_file", json!({"path": "link_inside/new.txt", "content": "n"})));
    assert_eq!(ws.read("inside/new.txt"), "n");
}

#[test]
fn walkers_do_not_follow_links_out() {
    let ws = hostile_workspace();
    let found = expect_ok(&ws.call("search", json!({"query": SECRET})));
    assert_eq!(found, format!("No matches for '{SECRET}'."));
    let globbed = expect_ok(&ws.call("glob", json!({"pattern": "**/secret*"})));
    assert!(globbed.starts_with("No files match"), "{globbed}");
    let listed = expect_ok(&ws.call("list_dir", json!({"depth": 3})));
    assert!(listed.contains("link_dir@"), "{listed}");
    assert!(!listed.contains("secret"), "{listed}");
}
