//! What the attack on the tools found, each as a case: hard links, bounded
//! error messages, failed writes leaving nothing behind, and the small
//! refusals (absolute note paths, a file as the shell's folder, symlinks in
//! folder listings).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{PermissionsExt, symlink};

use crate::common::{TestWorkspace, expect_error, expect_ok};
use serde_json::json;

#[test]
fn a_hard_linked_file_is_read_only_after_a_warning() {
    let ws = TestWorkspace::code();
    let outside = ws.outside().join("outside.txt");
    std::fs::write(&outside, "shared content\n").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.txt")).unwrap();
    ws.write("plain.txt", "plain\n");

    let text = expect_ok(&ws.call("read_file", json!({"path": "linked.txt"})));
    let warning = text.find("hard links").expect("no hard-link warning");
    let content = text.find("shared content").expect("no content");
    assert!(warning < content, "the warning must come first: {text}");
    let plain = expect_ok(&ws.call("read_file", json!({"path": "plain.txt"})));
    assert!(!plain.contains("hard links"), "{plain}");

    // Writing replaces the name with a file of its own: the outside name
    // keeps its content, and the result says what happened.
    let args = json!({"path": "linked.txt", "content": "more\n", "mode": "append"});
    let text = expect_ok(&ws.call("write_file", args));
    assert!(text.contains("hard links"), "{text}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "shared content\n");
    assert_eq!(ws.read("linked.txt"), "shared content\nmore\n");
}

#[test]
fn the_vault_warns_about_hard_links_too() {
    let ws = TestWorkspace::vault();
    let outside = ws.outside().join("outside.md");
    std::fs::write(&outside, "# shared").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.md")).unwrap();
    let text = expect_ok(&ws.call("read_note", json!({"path": "linked"})));
    assert!(text.find("hard links").unwrap() < text.find("# shared").unwrap(), "{text}");
}

#[test]
fn edit_lists_at_most_twenty_matching_lines() {
    let ws = TestWorkspace::code();
    ws.write("many.txt", "x\n".repeat(5000));
    let args = json!({"path": "many.txt", "old_str": "x", "new_str": "y"});
    let message = expect_error(&ws.call("edit_file", args));
    assert!(message.contains("matches 5000 times"), "{message}");
    assert!(message.contains("and 4980 more"), "{message}");
    assert!(message.len() < 400, "{} bytes: {message}", message.len());
}

#[test]
fn a_failed_write_leaves_no_temporary_file() {
    let ws = TestWorkspace::code();
    ws.write("dir/keep.txt", "keep");
    // A folder where the file should be: the rename fails after the
    // temporary file was written.
    std::fs::create_dir(ws.path("dir/target")).unwrap();
    std::fs::write(ws.path("dir/target/inner"), "x").unwrap();
    let args = json!({"path": "dir/target", "content": "data"});
    expect_error(&ws.call("write_file", args));
    // A read-only folder: the temporary file cannot even be created.
    let locked = ws.path("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let output = ws.call("write_file", json!({"path": "locked/f.txt", "content": "data"}));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    // As root the write may succeed; either way nothing temporary remains.
    let _ = output;
    let leftovers: Vec<String> =
        ws.snapshot().into_iter().filter(|p| p.contains(".axon-write-")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_absolute_note_path_outside_the_vault_is_refused() {
    let ws = TestWorkspace::vault();
    let outside = ws.outside().join("evil");
    let args = json!({"path": outside.to_string_lossy(), "content": "x"});
    let message = expect_error(&ws.call("create_note", args));
    assert!(message.contains("outside the workspace"), "{message}");
    assert!(!ws.outside().join("evil.md").exists());
    assert!(!ws.path(outside.to_string_lossy().trim_start_matches('/')).exists());
    // An absolute path inside the vault is the note it names.
    let inside = ws.path("Daily/today");
    let args = json!({"path": inside.to_string_lossy(), "content": "hi"});
    expect_ok(&ws.call("create_note", args));
    assert_eq!(ws.read("Daily/today.md"), "hi");
    // A leading `/` alone is still the vault root.
    expect_ok(&ws.call("list_folder", json!({"path": "/"})));
}

#[test]
fn list_folder_marks_symlinks() {
    let ws = TestWorkspace::vault();
    ws.write("real/note.md", "x");
    symlink(ws.path("real"), ws.path("alias")).unwrap();
    symlink(ws.outside(), ws.path("out")).unwrap();
    let text = expect_ok(&ws.call("list_folder", json!({"path": ""})));
    assert!(text.contains("[symlink] alias@"), "{text}");
    assert!(text.contains("[symlink] out@"), "{text}");
    assert!(text.contains("[folder] real/"), "{text}");
}

#[test]
fn shell_says_when_its_workdir_is_a_file() {
    let ws = TestWorkspace::code();
    ws.write("file.txt", "x");
    let args = json!({"command": "true", "workdir": "file.txt"});
    let message = expect_error(&ws.call("shell", args));
    assert!(message.contains("is a file, not a folder"), "{message}");
}

#[test]
fn shell_runs_in_the_folder_it_was_given() {
    let ws = TestWorkspace::code();
    ws.write("sub/here.txt", "x");
    let text = expect_ok(&ws.call("shell", json!({"command": "pwd; ls", "workdir": "sub"})));
    assert!(text.contains("here.txt"), "{text}");
    assert!(text.contains(&ws.path("sub").to_string_lossy().into_owned()), "{text}");
}

#[test]
fn walks_keep_gitignore_semantics() {
    let ws = TestWorkspace::code();
    ws.write(".gitignore", "build/\n*.log\n!keep.log\n");
    ws.write("build/out.txt", "needle");
    ws.write("a.log", "needle");
    ws.write("keep.log", "needle");
    ws.write("src/.ignore", "gen.rs\n");
    ws.write("src/gen.rs", "needle");
    ws.write("src/main.rs", "needle");
    ws.write(".hidden/h.txt", "needle");
    ws.write(".git/config", "needle");
    let text = expect_ok(&ws.call("search", json!({"query": "needle"})));
    assert!(text.starts_with("3 matches in 3 files"), "{text}");
    for shown in ["keep.log", "src/main.rs", ".hidden/h.txt"] {
        assert!(text.contains(shown), "{shown} missing: {text}");
    }
    let globbed = expect_ok(&ws.call("glob", json!({"pattern": "*.log"})));
    assert_eq!(globbed, "keep.log");
    // An explicit glob decides before the ignore rules, as `rg -g` does.
    let forced = expect_ok(&ws.call("search", json!({"query": "needle", "glob": "*.log"})));
    assert!(forced.contains("a.log") && forced.contains("keep.log"), "{forced}");
    let listed = expect_ok(&ws.call("list_dir", json!({"depth": 2})));
    assert!(!listed.contains("build") && !listed.contains(".git/"), "{listed}");
    assert!(listed.contains(".hidden/"), "{listed}");
}

#[test]
fn files_read_outside_a_workspace_are_not_followed_or_blocked_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.md"), "rules").unwrap();
    symlink(dir.path().join("real.md"), dir.path().join("link.md")).unwrap();
    let fifo = dir.path().join("fifo.md");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let read = |name: &str| axon_tools::read_text_nofollow(&dir.path().join(name), 1024);
    assert_eq!(read("real.md").unwrap(), "rules");
    assert!(read("link.md").is_err(), "a symlink was followed");
    assert!(read("fifo.md").is_err(), "a FIFO was read");
}

#[test]
fn list_folder_is_bounded() {
    let ws = TestWorkspace::vault();
    for i in 0..1005 {
        ws.write(&format!("many/n{i:04}.md"), "");
    }
    let text = expect_ok(&ws.call("list_folder", json!({"path": "many"})));
    assert_eq!(text.lines().count(), 1001, "{}", &text[text.len() - 200..]);
    assert!(text.ends_with(
        "[5 more entries not shown; list a subfolder, or use glob or search to find notes]"
    ));
}

#[test]
fn invalid_arguments_are_described_briefly() {
    let ws = TestWorkspace::code();
    let huge = "x".repeat(1_000_000);
    // A wrong type: the validator quotes the value.
    let message = expect_error(&ws.call("read_file", json!({"path": 1, "start_line": huge})));
    assert!(message.contains("start_line"), "{}", &message[..200.min(message.len())]);
    assert!(message.len() < 2000, "{} bytes", message.len());
}

#[test]
fn search_and_edit_warn_about_hard_links_before_quoting() {
    let ws = TestWorkspace::code();
    let outside = ws.outside().join("outside.txt");
    std::fs::write(&outside, "needle one\nneedle two\n").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.txt")).unwrap();
    ws.write("plain.txt", "needle\n");
    let text = expect_ok(&ws.call("search", json!({"query": "needle"})));
    let note = text.find("hard links").expect("no hard-link note in search");
    assert!(note < text.find("needle one").unwrap(), "{text}");
    assert_eq!(text.matches("hard links").count(), 1, "only the linked file: {text}");
    for old in ["needle", "missing text"] {
        let args = json!({"path": "linked.txt", "old_str": old, "new_str": "x"});
        let message = expect_error(&ws.call("edit_file", args));
        assert!(message.starts_with("[Note: 'linked.txt' has 2 hard links"), "{message}");
    }
}
