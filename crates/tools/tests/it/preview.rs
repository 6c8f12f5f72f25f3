//! Previews: what a call would do, worked out without doing it. A preview
//! changes nothing on disk, shows the content the call then writes, and
//! refuses what the call refuses, in the call's words.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::common::{TestWorkspace, expect_error, expect_ok};
use axon_protocol::Preview;
use serde_json::{Value, json};

/// Every path below `base` with its bytes (a folder: `None`; a symlink: its
/// target), sorted: equal states are equal byte for byte.
fn state(base: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn visit(base: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                out.push((name, None));
                visit(base, &path, out);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((name, Some(target.to_string_lossy().as_bytes().to_vec())));
            } else {
                out.push((name, Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    let mut out = Vec::new();
    visit(base, base, &mut out);
    out.sort();
    out
}

/// Previews `name(args)` and checks the file system (workspace and beside
/// it) is byte for byte as it was.
fn preview_only(ws: &TestWorkspace, name: &str, args: Value) -> Preview {
    let before = state(ws.base.path());
    let preview = ws.registry.preview(&ws.ctx, name, &args);
    assert_eq!(state(ws.base.path()), before, "{name} preview changed the file system");
    preview
}

fn diff_of(preview: &Preview) -> (&str, &str, bool) {
    match preview {
        Preview::Diff { path, diff, created } => (path, diff, *created),
        other => panic!("expected a diff, got {other:?}"),
    }
}

fn invalid_of(preview: &Preview) -> &str {
    match preview {
        Preview::Invalid { message } => message,
        other => panic!("expected invalid, got {other:?}"),
    }
}

/// Applies a unified diff to `old`, checking every context and removed
/// line against it; notes before the headers are skipped.
fn apply(old: &str, diff: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut next = 0usize; // index of the next old line not yet used
    let mut last = ' ';
    let mut lines = diff.split('\n').skip_while(|l| !l.starts_with("--- a/"));
    assert!(lines.next().is_some_and(|l| l.starts_with("--- a/")), "{diff}");
    assert!(lines.next().is_some_and(|l| l.starts_with("+++ b/")), "{diff}");
    for line in lines {
        if let Some(header) = line.strip_prefix("@@ -") {
            let old_range = header.split(' ').next().unwrap();
            let mut parts = old_range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |n| n.parse().unwrap());
            // `-0,0` and `-N,0` insert after line N; otherwise N is the first.
            let first = if len == 0 { start } else { start - 1 };
            while next < first {
                out.push_str(old_lines[next]);
                next += 1;
            }
            continue;
        }
        if line.is_empty() {
            continue; // the text's final newline
        }
        let (sign, text) = line.split_at(1);
        match sign {
            " " | "-" => {
                let old_line = old_lines[next];
                assert_eq!(old_line.strip_suffix('\n').unwrap_or(old_line), text, "{diff}");
                if sign == " " {
                    out.push_str(old_line);
                }
                next += 1;
            }
            "+" => {
                out.push_str(text);
                out.push('\n');
            }
            "\\" => {
                if last == '+' {
                    out.pop();
                }
            }
            _ => panic!("not a diff line: {line:?} in\n{diff}"),
        }
        last = sign.chars().next().unwrap();
    }
    for line in &old_lines[next..] {
        out.push_str(line);
    }
    out
}

// ---- write_file ----

#[test]
fn write_preview_of_a_new_file_creates_nothing() {
    let ws = TestWorkspace::code();
    let preview = preview_only(
        &ws,
        "write_file",
        json!({"path": "deep/new/file.txt", "content": "one\ntwo\n"}),
    );
    let (path, diff, created) = diff_of(&preview);
    assert_eq!(path, "deep/new/file.txt");
    assert!(created);
    assert_eq!(
        diff,
        "--- a/deep/new/file.txt\n+++ b/deep/new/file.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    );
    assert!(!ws.path("deep").exists(), "the preview created a folder");
}

#[test]
fn write_preview_shows_what_the_write_then_writes() {
    let ws = TestWorkspace::code();
    let old: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let cases = [
        json!({"path": "f.txt", "content": old.replace("line 20\n", "twenty\n")}),
        json!({"path": "f.txt", "content": "short, no newline"}),
        json!({"path": "f.txt", "content": "appended\nlines", "mode": "append"}),
        json!({"path": "f.txt", "content": "", "mode": "overwrite"}),
    ];
    for args in cases {
        ws.write("f.txt", &old);
        let preview = preview_only(&ws, "write_file", args.clone());
        let (path, diff, created) = diff_of(&preview);
        assert_eq!((path, created), ("f.txt", false));
        let expected = apply(&old, diff);
        expect_ok(&ws.call("write_file", args.clone()));
        assert_eq!(ws.read("f.txt"), expected, "{args}\n{diff}");
    }
}

#[test]
fn write_preview_of_an_append_to_a_file_without_final_newline() {
    let ws = TestWorkspace::code();
    ws.write("log.txt", "a\nb");
    let args = json!({"path": "log.txt", "content": "c\n", "mode": "append"});
    let preview = preview_only(&ws, "write_file", args.clone());
    let (_, diff, _) = diff_of(&preview);
    assert_eq!(
        diff,
        "--- a/log.txt\n+++ b/log.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+bc\n"
    );
    expect_ok(&ws.call("write_file", args));
    assert_eq!(ws.read("log.txt"), apply("a\nb", diff));
}

#[test]
fn write_preview_refuses_what_the_write_refuses() {
    let ws = TestWorkspace::code();
    ws.write("plain", "a file\n");
    std::fs::create_dir(ws.path("folder")).unwrap();
    for path in ["plain/below.txt", "plain/deeper/below.txt", "folder", ""] {
        let args = json!({"path": path, "content": "x"});
        let preview = preview_only(&ws, "write_file", args.clone());
        let message = invalid_of(&preview).to_string();
        assert_eq!(message, expect_error(&ws.call("write_file", args)), "{path}");
    }
}

#[test]
fn write_preview_of_an_unchanged_file_says_so() {
    let ws = TestWorkspace::code();
    ws.write("same.txt", "same\n");
    let preview = preview_only(&ws, "write_file", json!({"path": "same.txt", "content": "same\n"}));
    let (_, diff, created) = diff_of(&preview);
    assert!(!created);
    assert_eq!(diff, "[The content would stay the same.]\n--- a/same.txt\n+++ b/same.txt\n");
}

#[test]
fn write_preview_names_an_absolute_path_inside_relative_to_the_workspace() {
    let ws = TestWorkspace::code();
    std::fs::create_dir(ws.path("sub")).unwrap();
    let absolute = ws.path("sub/x.txt").display().to_string();
    let preview = preview_only(&ws, "write_file", json!({"path": absolute, "content": "x\n"}));
    let (path, diff, _) = diff_of(&preview);
    assert_eq!(path, "sub/x.txt");
    assert!(diff.starts_with("--- a/sub/x.txt\n+++ b/sub/x.txt\n"), "{diff}");
}

#[test]
fn write_preview_of_a_binary_file_describes_it() {
    let ws = TestWorkspace::code();
    ws.write("blob.bin", b"\0\x01\x02");
    let preview = preview_only(&ws, "write_file", json!({"path": "blob.bin", "content": "text\n"}));
    let (_, diff, _) = diff_of(&preview);
    assert_eq!(
        diff,
        "['blob.bin' is binary (3 bytes); no lines shown: its content would be replaced by 5 \
         bytes, 1 lines.]\n--- a/blob.bin\n+++ b/blob.bin\n"
    );
}

// ---- edit_file ----

#[test]
fn edit_preview_shows_what_the_edit_then_writes() {
    let ws = TestWorkspace::code();
    let body: String = (1..=30).map(|n| format!("fn f{n}() {{}}\n")).collect();
    let cases: Vec<(String, Value)> = vec![
        (body.clone(), json!({"old_str": "fn f10() {}\n", "new_str": "fn ten() {\n}\n"})),
        (
            body.replace('\n', "\r\n"),
            json!({"old_str": "fn f3() {}\nfn f4() {}", "new_str": "fn f3_4() {}\nfn x() {}"}),
        ),
        (
            "x = 1\ny = 1\nx = 1".to_string(),
            json!({"old_str": "x = 1", "new_str": "x = 2", "replace_all": true}),
        ),
        ("last line".to_string(), json!({"old_str": "last line", "new_str": "last\nline\n"})),
    ];
    for (old, mut args) in cases {
        ws.write("src.rs", &old);
        args["path"] = json!("src.rs");
        let preview = preview_only(&ws, "edit_file", args.clone());
        let (path, diff, created) = diff_of(&preview);
        assert_eq!((path, created), ("src.rs", false));
        let expected = apply(&old, diff);
        assert_ne!(expected, old);
        expect_ok(&ws.call("edit_file", args.clone()));
        assert_eq!(ws.read("src.rs"), expected, "{args}\n{diff}");
    }
}

#[test]
fn edit_preview_refuses_with_the_tools_own_words() {
    let ws = TestWorkspace::code();
    ws.write("a.txt", "alpha\nbeta\nalpha\n");
    ws.write("blob.bin", b"ab\0cd");
    std::fs::create_dir(ws.path("dir")).unwrap();
    let cases = [
        json!({"path": "a.txt", "old_str": "gamma", "new_str": "x"}),
        json!({"path": "a.txt", "old_str": "  beta", "new_str": "x"}),
        json!({"path": "a.txt", "old_str": "alpha", "new_str": "x"}),
        json!({"path": "a.txt", "old_str": "", "new_str": "x"}),
        json!({"path": "a.txt", "old_str": "beta", "new_str": "beta"}),
        json!({"path": "missing.txt", "old_str": "a", "new_str": "b"}),
        json!({"path": "blob.bin", "old_str": "ab", "new_str": "b"}),
        json!({"path": "dir", "old_str": "a", "new_str": "b"}),
    ];
    for args in cases {
        let preview = preview_only(&ws, "edit_file", args.clone());
        let message = invalid_of(&preview).to_string();
        assert_eq!(message, expect_error(&ws.call("edit_file", args.clone())), "{args}");
    }
    let preview = preview_only(
        &ws,
        "edit_file",
        json!({"path": "a.txt", "old_str": "gamma", "new_str": "x"}),
    );
    assert!(invalid_of(&preview).starts_with("No match for old_str in 'a.txt'."));
    assert_eq!(ws.read("a.txt"), "alpha\nbeta\nalpha\n");
}

#[test]
fn edit_preview_of_a_hard_linked_file_warns_first() {
    let ws = TestWorkspace::code();
    let outside = ws.outside().join("shared.txt");
    std::fs::write(&outside, "one\ntwo\n").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.txt")).unwrap();
    let args = json!({"path": "linked.txt", "old_str": "two", "new_str": "2"});
    let preview = preview_only(&ws, "edit_file", args);
    let (_, diff, _) = diff_of(&preview);
    assert!(diff.starts_with("[Note: 'linked.txt' has 2 hard links;"), "{diff}");
    assert_eq!(apply("one\ntwo\n", diff), "one\n2\n");
    let miss = json!({"path": "linked.txt", "old_str": "zzz", "new_str": "2"});
    let preview = preview_only(&ws, "edit_file", miss.clone());
    let message = invalid_of(&preview).to_string();
    assert!(message.starts_with("[Note: 'linked.txt' has 2 hard links;"), "{message}");
    assert_eq!(message, expect_error(&ws.call("edit_file", miss)));
}

// ---- paths that lead outside ----

#[test]
fn previews_refuse_paths_outside_the_workspace_without_reading_them() {
    let ws = TestWorkspace::code();
    let secret = ws.outside().join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    std::os::unix::fs::symlink(&secret, ws.path("link.txt")).unwrap();
    std::os::unix::fs::symlink(ws.outside(), ws.path("out")).unwrap();
    let absolute = secret.display().to_string();
    for path in ["../secret.txt", absolute.as_str(), "link.txt", "out/secret.txt"] {
        for (tool, args) in [
            ("write_file", json!({"path": path, "content": "x"})),
            ("write_file", json!({"path": path, "content": "x", "mode": "append"})),
            ("edit_file", json!({"path": path, "old_str": "secret", "new_str": "x"})),
        ] {
            let preview = preview_only(&ws, tool, args.clone());
            let message = invalid_of(&preview).to_string();
            assert!(message.contains("outside the workspace"), "{tool} {path}: {message}");
            // Nothing of the file's content is in what the preview says.
            assert!(!message.contains("secret\n"), "{message}");
            assert_eq!(message, expect_error(&ws.call(tool, args)), "{tool} {path}");
        }
        let args = json!({"command": "true", "workdir": path});
        let message = invalid_of(&preview_only(&ws, "shell", args.clone())).to_string();
        assert!(message.contains("outside the workspace"), "shell {path}: {message}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret\n");
}

// ---- create_note ----

#[test]
fn create_note_preview_matches_the_note_it_creates() {
    let ws = TestWorkspace::vault();
    let args = json!({"path": "Daily/2025-01-15", "content": "# Today\n"});
    let preview = preview_only(&ws, "create_note", args.clone());
    let (path, diff, created) = diff_of(&preview);
    assert_eq!((path, created), ("Daily/2025-01-15.md", true));
    assert_eq!(
        diff,
        "--- a/Daily/2025-01-15.md\n+++ b/Daily/2025-01-15.md\n@@ -0,0 +1 @@\n+# Today\n"
    );
    expect_ok(&ws.call("create_note", args));
    assert_eq!(ws.read("Daily/2025-01-15.md"), apply("", diff));

    let append = json!({"path": "Daily/2025-01-15.md", "content": "- walk\n", "mode": "append"});
    let preview = preview_only(&ws, "create_note", append.clone());
    let (_, diff, created) = diff_of(&preview);
    assert!(!created);
    let expected = apply("# Today\n", diff);
    assert_eq!(expected, "# Today\n- walk\n");
    expect_ok(&ws.call("create_note", append));
    assert_eq!(ws.read("Daily/2025-01-15.md"), expected);
}

#[test]
fn create_note_preview_refuses_what_create_note_refuses() {
    let ws = TestWorkspace::vault();
    ws.write("Projects.md", "a note\n");
    // An absolute path is taken as one (outside the vault here), as the
    // tool takes it.
    for path in ["bad:name", "/etc/passwd", "/Daily/x", "../escape", "Projects.md/inner"] {
        let args = json!({"path": path, "content": "x"});
        let preview = preview_only(&ws, "create_note", args.clone());
        let message = invalid_of(&preview).to_string();
        assert_eq!(message, expect_error(&ws.call("create_note", args)), "{path}");
    }
}

// ---- shell ----

#[test]
fn shell_preview_gives_the_command_and_its_folder() {
    let ws = TestWorkspace::code();
    std::fs::create_dir_all(ws.path("sub/dir")).unwrap();
    ws.write("file.txt", "x");
    let preview = preview_only(&ws, "shell", json!({"command": "touch made-by-shell"}));
    assert_eq!(
        preview,
        Preview::Command {
            command: "touch made-by-shell".into(),
            workdir: ".".into(),
            sandbox: None
        }
    );
    let preview = preview_only(
        &ws,
        "shell",
        json!({"command": "ls", "workdir": "sub/./dir/../dir", "timeout_ms": null}),
    );
    assert_eq!(
        preview,
        Preview::Command { command: "ls".into(), workdir: "sub/dir".into(), sandbox: None }
    );
    for args in [
        json!({"command": "ls", "workdir": "file.txt"}),
        json!({"command": "ls", "workdir": "missing"}),
        json!({"command": "  "}),
    ] {
        let preview = preview_only(&ws, "shell", args.clone());
        let message = invalid_of(&preview).to_string();
        assert_eq!(message, expect_error(&ws.call("shell", args)));
    }
    assert!(!ws.path("made-by-shell").exists());
}

// ---- the registry's door ----

#[test]
fn preview_of_unknown_tools_and_bad_arguments_is_invalid_as_the_call_is() {
    let ws = TestWorkspace::code();
    for (tool, args) in [
        ("no_such_tool", json!({})),
        ("write_file", json!({"content": "no path"})),
        ("write_file", json!({"path": "a.txt", "content": "x", "mode": "sideways"})),
        ("edit_file", json!({"path": 7, "old_str": "a", "new_str": "b"})),
        ("shell", json!("not an object")),
    ] {
        let preview = preview_only(&ws, tool, args.clone());
        let message = invalid_of(&preview).to_string();
        assert_eq!(message, expect_error(&ws.call(tool, args)), "{tool}");
    }
    let message = invalid_of(&ws.registry.preview(&ws.ctx, "no_such_tool", &json!({}))).to_string();
    assert_eq!(message, "Tool 'no_such_tool' is not available");
}

#[test]
fn tools_with_nothing_more_to_show_preview_their_arguments() {
    let ws = TestWorkspace::code();
    ws.write("a.txt", "a\n");
    for (tool, args) in [
        ("read_file", json!({"path": "a.txt", "start_line": null})),
        ("list_dir", json!({})),
        ("search", json!({"query": "a"})),
        ("glob", json!({"pattern": "*.txt"})),
    ] {
        let preview = preview_only(&ws, tool, args.clone());
        assert_eq!(preview, Preview::Arguments { arguments: args }, "{tool}");
    }
}
