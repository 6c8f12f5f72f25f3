//! `apply_patch`: Codex's patch format, several files at once, all or
//! nothing. The cases follow the scenarios of Codex's own apply-patch
//! tests (add, several operations, several chunks, move into a new folder,
//! move and add over an existing file, missing context, delete of a missing
//! file or a folder, bad headers, a chunk of added lines only, padded
//! markers, Unicode punctuation, `*** End of File`), written anew, plus
//! axon's own: all or nothing (Codex leaves a partial result), CRLF, the
//! jail, and the preview.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{TestWorkspace, expect_error, expect_ok};
use axon_protocol::Preview;
use serde_json::json;

fn patch(ws: &TestWorkspace, text: &str) -> axon_protocol::ToolOutput {
    ws.call("apply_patch", json!({ "input": text }))
}

fn preview(ws: &TestWorkspace, text: &str) -> Preview {
    ws.registry.preview(&ws.ctx, "apply_patch", &json!({ "input": text }))
}

#[test]
fn adds_a_file_creating_its_folders() {
    let ws = TestWorkspace::code();
    let out = expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Add File: docs/new/bar.md\n+# Bar\n+\n+text\n*** End Patch\n",
    ));
    assert_eq!(ws.read("docs/new/bar.md"), "# Bar\n\ntext\n");
    assert!(out.starts_with("Applied the patch (1 file):\nA docs/new/bar.md\n"), "{out}");
    assert!(out.contains("+# Bar"), "{out}");
}

#[test]
fn adds_updates_and_deletes_in_one_patch() {
    let ws = TestWorkspace::code();
    ws.write("modify.txt", "line1\nline2\n");
    ws.write("delete.txt", "obsolete\n");
    let out = expect_ok(&patch(
        &ws,
        "*** Begin Patch\n\
         *** Add File: nested/new.txt\n+created\n\
         *** Delete File: delete.txt\n\
         *** Update File: modify.txt\n@@\n-line2\n+changed\n\
         *** End Patch",
    ));
    assert_eq!(ws.read("nested/new.txt"), "created\n");
    assert_eq!(ws.read("modify.txt"), "line1\nchanged\n");
    assert!(!ws.path("delete.txt").exists());
    assert!(out.contains("A nested/new.txt\nD delete.txt\nM modify.txt\n"), "{out}");
}

#[test]
fn several_chunks_apply_in_file_order() {
    let ws = TestWorkspace::code();
    ws.write("multi.txt", "line1\nline2\nline3\nline4\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4\n*** End Patch",
    ));
    assert_eq!(ws.read("multi.txt"), "line1\nchanged2\nline3\nchanged4\n");
    // Chunks out of order are refused, saying so.
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: multi.txt\n@@\n-changed4\n+x\n@@\n-changed2\n+y\n*** End Patch",
    ));
    assert!(message.contains("chunks must come in the order of the file"), "{message}");
    assert_eq!(ws.read("multi.txt"), "line1\nchanged2\nline3\nchanged4\n");
}

#[test]
fn a_context_line_narrows_where_a_chunk_applies() {
    let ws = TestWorkspace::code();
    ws.write("a.py", "def f():\n    return 1\n\ndef g():\n    return 1\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    return 1\n+    return 2\n*** End Patch",
    ));
    assert_eq!(ws.read("a.py"), "def f():\n    return 1\n\ndef g():\n    return 2\n");
}

#[test]
fn moves_and_updates_into_a_new_folder_and_over_an_existing_file() {
    let ws = TestWorkspace::code();
    ws.write("old/name.txt", "from\n");
    ws.write("old/other.txt", "unrelated\n");
    let out = expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-from\n+new\n*** End Patch",
    ));
    assert_eq!(ws.read("renamed/dir/name.txt"), "new\n");
    assert!(!ws.path("old/name.txt").exists());
    assert_eq!(ws.read("old/other.txt"), "unrelated\n");
    assert!(out.contains("R old/name.txt -> renamed/dir/name.txt"), "{out}");
    assert!(out.contains("--- a/old/name.txt\n+++ b/renamed/dir/name.txt"), "{out}");

    // Onto a file that exists: it is replaced.
    ws.write("a.txt", "a\n");
    ws.write("b.txt", "b\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+moved\n*** End Patch",
    ));
    assert_eq!(ws.read("b.txt"), "moved\n");
    assert!(!ws.path("a.txt").exists());

    // A move alone renames.
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: c.txt\n*** End Patch",
    ));
    assert_eq!(ws.read("c.txt"), "moved\n");
    assert!(!ws.path("b.txt").exists());
}

#[test]
fn add_over_an_existing_file_replaces_it_and_the_preview_says_so() {
    let ws = TestWorkspace::code();
    ws.write("duplicate.txt", "old content\n");
    let text = "*** Begin Patch\n*** Add File: duplicate.txt\n+new content\n*** End Patch";
    let Preview::Diff { diff, created: false, .. } = preview(&ws, text) else { panic!() };
    assert!(diff.contains("the patch replaces its whole content"), "{diff}");
    expect_ok(&patch(&ws, text));
    assert_eq!(ws.read("duplicate.txt"), "new content\n");
}

#[test]
fn missing_context_changes_nothing_and_shows_the_closest_lines() {
    let ws = TestWorkspace::code();
    ws.write("modify.txt", "line1\nline2\n");
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: modify.txt\n@@\n-missing\n+changed\n*** End Patch",
    ));
    assert!(
        message.contains("Cannot apply the chunk at patch line 3 to 'modify.txt'"),
        "{message}"
    );
    assert!(message.contains("  missing"), "the lines looked for are quoted: {message}");
    assert_eq!(ws.read("modify.txt"), "line1\nline2\n");

    ws.write("code.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: code.rs\n@@\n-    println!(\"helo\");\n+    println!(\"bye\");\n*** End Patch",
    ));
    assert!(message.contains("closest lines are:\n2 |     println!(\"hello\");"), "{message}");
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: code.rs\n@@ fn mian() {\n-x\n+y\n*** End Patch",
    ));
    assert!(message.contains("its '@@ fn mian() {' line was not found"), "{message}");
    assert!(message.contains("1 | fn main() {"), "{message}");
}

#[test]
fn all_or_nothing_a_later_failure_undoes_nothing_because_nothing_was_written() {
    // Codex writes created.txt and then fails; axon writes nothing.
    let ws = TestWorkspace::code();
    ws.write("keep.txt", "keep\n");
    let before = ws.snapshot();
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: keep.txt\n@@\n-keep\n+kept\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch",
    ));
    assert!(message.contains("Cannot update 'missing.txt': there is no such file"), "{message}");
    assert!(message.contains("Nothing was changed"), "{message}");
    assert_eq!(ws.snapshot(), before);
    assert_eq!(ws.read("keep.txt"), "keep\n");

    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Delete File: missing.txt\n*** End Patch",
    ));
    assert!(message.contains("Cannot delete 'missing.txt': there is no such file"), "{message}");
    assert_eq!(ws.snapshot(), before);
}

/// An editor that writes every file to the disk but refuses one.
struct RefusingEditor {
    refused: std::path::PathBuf,
}

impl axon_tools::Buffers for RefusingEditor {
    fn read(&self, _path: &std::path::Path) -> Result<String, String> {
        Err("not open".to_string())
    }

    fn write(&self, path: &std::path::Path, text: &str) -> Result<(), String> {
        if path == self.refused {
            return Err("the buffer is read-only".to_string());
        }
        std::fs::write(path, text).map_err(|e| e.to_string())
    }
}

#[test]
fn a_write_that_fails_puts_back_the_files_written_before_it() {
    let mut ws = TestWorkspace::code();
    ws.write("a.txt", "a\n");
    ws.write("z.txt", "z\n");
    let editor = RefusingEditor { refused: ws.path("z.txt") };
    let workspace = axon_tools::Workspace::new(ws.root()).unwrap();
    ws.ctx = axon_tools::ToolContext::new(workspace.with_buffers(std::sync::Arc::new(editor)));
    let before = ws.snapshot();
    // a.txt and new.txt are written, then z.txt fails: both are undone.
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: new.txt\n+n\n\
         *** Update File: z.txt\n@@\n-z\n+Z\n*** End Patch",
    ));
    assert!(
        message.contains("The editor could not write 'z.txt': the buffer is read-only"),
        "{message}"
    );
    assert!(message.contains("put back as they were: nothing was changed"), "{message}");
    assert_eq!(ws.read("a.txt"), "a\n");
    assert_eq!(ws.read("z.txt"), "z\n");
    assert_eq!(ws.snapshot(), before);
    // A plan that cannot be written at all is refused before any write.
    ws.write("blocker", "file\n");
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: blocker/inner.txt\n+x\n*** End Patch",
    ));
    assert!(message.contains("a file is in the way"), "{message}");
    assert_eq!(ws.read("a.txt"), "a\n");
}

#[test]
fn folders_and_bad_headers_are_refused() {
    let ws = TestWorkspace::code();
    ws.write("dir/foo.txt", "x\n");
    let message = expect_error(&patch(&ws, "*** Begin Patch\n*** Delete File: dir\n*** End Patch"));
    assert!(message.contains("'dir' is a folder"), "{message}");
    assert_eq!(ws.read("dir/foo.txt"), "x\n");
    let message =
        expect_error(&patch(&ws, "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch"));
    assert!(message.starts_with("Invalid patch: line 2:"), "{message}");
    let message = expect_error(&patch(&ws, "*** Begin Patch\n*** End Patch"));
    assert!(message.contains("changes no file"), "{message}");
    let message =
        expect_error(&patch(&ws, "*** Begin Patch\n*** Update File: dir/foo.txt\n*** End Patch"));
    assert!(message.contains("has no changes"), "{message}");
}

#[test]
fn a_chunk_of_added_lines_goes_after_its_context_or_at_the_end() {
    let ws = TestWorkspace::code();
    ws.write("input.txt", "line1\nline2\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n*** End Patch",
    ));
    assert_eq!(ws.read("input.txt"), "line1\nline2\nadded line 1\nadded line 2\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: input.txt\n@@ line1\n+between\n*** End Patch",
    ));
    assert_eq!(ws.read("input.txt"), "line1\nbetween\nline2\nadded line 1\nadded line 2\n");
    // A last line without a line end gets one when lines are added after it.
    ws.write("tail.txt", "no newline");
    expect_ok(&patch(&ws, "*** Begin Patch\n*** Update File: tail.txt\n@@\n+more\n*** End Patch"));
    assert_eq!(ws.read("tail.txt"), "no newline\nmore\n");
}

#[test]
fn padded_markers_and_a_heredoc_are_read() {
    let ws = TestWorkspace::code();
    ws.write("file.txt", "one\ntwo\n");
    expect_ok(&patch(
        &ws,
        "<<'EOF'\n  *** Begin Patch  \n *** Update File: file.txt \n@@\n-one\n+ONE\n   *** End Patch\nEOF\n",
    ));
    assert_eq!(ws.read("file.txt"), "ONE\ntwo\n");
}

#[test]
fn context_matches_at_looser_levels_only_when_exact_fails() {
    let ws = TestWorkspace::code();
    // Trailing blanks in the file, none in the patch.
    ws.write("t.txt", "alpha   \nbeta\t\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: t.txt\n@@\n alpha\n-beta\n+BETA\n*** End Patch",
    ));
    assert_eq!(ws.read("t.txt"), "alpha   \nBETA\n");
    // Indentation differs.
    ws.write("i.py", "if x:\n        y = 1\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: i.py\n@@\n-    y = 1\n+        y = 2\n*** End Patch",
    ));
    assert_eq!(ws.read("i.py"), "if x:\n        y = 2\n");
    // Typographic punctuation in the file, ASCII in the patch.
    ws.write(
        "u.txt",
        "pre\nimport asyncio  # local import \u{2013} avoids top\u{2011}level dep\npost\n",
    );
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: u.txt\n@@\n-import asyncio  # local import - avoids top-level dep\n+import asyncio  # changed\n*** End Patch",
    ));
    assert_eq!(ws.read("u.txt"), "pre\nimport asyncio  # changed\npost\n");
    // An exact match wins over an earlier loose one.
    ws.write("w.txt", "x \nx\n");
    expect_ok(&patch(&ws, "*** Begin Patch\n*** Update File: w.txt\n@@\n-x\n+y\n*** End Patch"));
    assert_eq!(ws.read("w.txt"), "x \ny\n");
}

#[test]
fn end_of_file_marker_matches_the_last_lines() {
    let ws = TestWorkspace::code();
    ws.write("tail.txt", "first\nsecond\nfirst\nsecond\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: tail.txt\n@@\n first\n-second\n+second updated\n*** End of File\n*** End Patch",
    ));
    assert_eq!(ws.read("tail.txt"), "first\nsecond\nfirst\nsecond updated\n");
}

#[test]
fn a_blank_separator_before_the_next_section_is_not_content() {
    let ws = TestWorkspace::code();
    ws.write("a.txt", "a\nb\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-b\n+B\n\n*** Add File: c.txt\n+c\n*** End Patch",
    ));
    assert_eq!(ws.read("a.txt"), "a\nB\n");
    assert_eq!(ws.read("c.txt"), "c\n");
}

#[test]
fn crlf_files_stay_crlf_and_untouched_lines_keep_their_bytes() {
    let ws = TestWorkspace::code();
    ws.write("dos.txt", "a\r\nb\r\nc\r\nlast");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: dos.txt\n@@\n a\n-b\n+B\n+B2\n*** End Patch",
    ));
    assert_eq!(ws.read("dos.txt"), "a\r\nB\r\nB2\r\nc\r\nlast");
    // Replacing the last line gives it a line end, as Codex does.
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: dos.txt\n@@\n-last\n+LAST\n*** End Patch",
    ));
    assert_eq!(ws.read("dos.txt"), "a\r\nB\r\nB2\r\nc\r\nLAST\r\n");
}

#[test]
fn every_path_goes_through_the_jail() {
    let ws = TestWorkspace::code();
    ws.write("in.txt", "in\n");
    let outside = ws.outside().join("victim.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    // A symlink inside pointing out.
    std::os::unix::fs::symlink(&outside, ws.path("link.txt")).unwrap();
    let before = ws.snapshot();
    for path in ["../victim.txt", outside.to_str().unwrap()] {
        let message = expect_error(&patch(
            &ws,
            &format!(
                "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Delete File: {path}\n*** End Patch"
            ),
        ));
        assert!(message.contains("outside the workspace"), "{message}");
        let message = expect_error(&patch(
            &ws,
            &format!(
                "*** Begin Patch\n*** Update File: in.txt\n*** Move to: {path}\n@@\n-in\n+out\n*** End Patch"
            ),
        ));
        assert!(message.contains("outside the workspace"), "{message}");
    }
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: link.txt\n@@\n-secret\n+owned\n*** End Patch",
    ));
    assert!(message.contains("outside the workspace"), "{message}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret\n");
    assert_eq!(ws.read("in.txt"), "in\n");
    assert_eq!(ws.snapshot(), before, "nothing was written, not even ok.txt");
}

#[test]
fn the_preview_shows_every_file_and_writes_nothing() {
    let ws = TestWorkspace::code();
    ws.write("m.txt", "one\n");
    ws.write("d.txt", "gone\n");
    let before = ws.snapshot();
    let text = "*** Begin Patch\n*** Add File: new/a.txt\n+hi\n*** Update File: m.txt\n@@\n-one\n+two\n*** Delete File: d.txt\n*** End Patch";
    let Preview::Diff { path, diff, created } = preview(&ws, text) else { panic!() };
    assert_eq!(path, "new/a.txt");
    assert!(!created);
    assert!(
        diff.starts_with("[The patch changes 3 files: A new/a.txt, M m.txt, D d.txt]\n"),
        "{diff}"
    );
    for part in ["+++ b/new/a.txt", "+hi", "+++ b/m.txt", "-one", "+two", "+++ b/d.txt", "-gone"] {
        assert!(diff.contains(part), "{part} in {diff}");
    }
    assert_eq!(ws.snapshot(), before, "a preview writes nothing, not even a folder");
    let bad = "*** Begin Patch\n*** Update File: m.txt\n@@\n-nope\n+x\n*** End Patch";
    let Preview::Invalid { message } = preview(&ws, bad) else { panic!() };
    assert!(message.contains("Cannot apply the chunk"), "{message}");
    let single = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch";
    assert!(matches!(preview(&ws, single), Preview::Diff { created: true, .. }));
}

#[test]
fn a_link_is_never_deleted_or_moved_through() {
    let ws = TestWorkspace::code();
    ws.write("real.txt", "real\n");
    std::os::unix::fs::symlink("real.txt", ws.path("link.txt")).unwrap();
    for patch_text in [
        "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch",
        "*** Begin Patch\n*** Update File: link.txt\n*** Move to: moved.txt\n@@\n-real\n+x\n*** End Patch",
    ] {
        let message = expect_error(&patch(&ws, patch_text));
        assert!(message.contains("it is a symbolic link"), "{message}");
    }
    assert_eq!(ws.read("real.txt"), "real\n");
    assert!(ws.path("link.txt").is_symlink());
    // Editing through a link inside the workspace edits its file, as
    // edit_file does.
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: link.txt\n@@\n-real\n+edited\n*** End Patch",
    ));
    assert_eq!(ws.read("real.txt"), "edited\n");
}

#[test]
fn one_file_named_twice_sees_its_own_earlier_changes() {
    let ws = TestWorkspace::code();
    ws.write("f.txt", "a\nb\n");
    expect_ok(&patch(
        &ws,
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** Update File: f.txt\n@@\n A\n-b\n+B\n*** End Patch",
    ));
    assert_eq!(ws.read("f.txt"), "A\nB\n");
    let message = expect_error(&patch(
        &ws,
        "*** Begin Patch\n*** Delete File: f.txt\n*** Update File: f.txt\n@@\n-A\n+x\n*** End Patch",
    ));
    assert!(message.contains("no such file"), "{message}");
    assert_eq!(ws.read("f.txt"), "A\nB\n");
}
