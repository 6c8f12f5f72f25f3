//! The file tools with an editor's buffers attached: they read the editor's
//! text and write through it, while every path is still judged by the jail
//! first, so nothing outside the workspace ever reaches the editor, and a
//! folder or file swapped for a symlink while the editor works is caught.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::common::{TestWorkspace, expect_error, expect_ok};
use axon_protocol::Preview;
use axon_tools::{Buffers, Profile, ToolContext, Workspace};
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Read(PathBuf),
    Write(PathBuf, String),
}

/// An editor whose buffers live in memory: a path it has open reads as its
/// text; any other read fails, as an editor's can.
#[derive(Default)]
struct Editor {
    texts: Mutex<HashMap<PathBuf, String>>,
    calls: Mutex<Vec<Call>>,
    write_error: Mutex<Option<String>>,
    /// An editor that only reads: its files are written on the disk.
    read_only: bool,
}

impl Editor {
    fn open(&self, path: PathBuf, text: &str) {
        self.texts.lock().unwrap().insert(path, text.to_string());
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn writes(&self) -> Vec<Call> {
        self.calls().into_iter().filter(|c| matches!(c, Call::Write(..))).collect()
    }
}

impl Buffers for Editor {
    fn read(&self, path: &Path) -> Result<String, String> {
        self.calls.lock().unwrap().push(Call::Read(path.to_path_buf()));
        self.texts.lock().unwrap().get(path).cloned().ok_or_else(|| "not open".to_string())
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        self.calls.lock().unwrap().push(Call::Write(path.to_path_buf(), text.to_string()));
        if let Some(message) = self.write_error.lock().unwrap().clone() {
            return Err(message);
        }
        self.texts.lock().unwrap().insert(path.to_path_buf(), text.to_string());
        Ok(())
    }

    fn writes(&self) -> bool {
        !self.read_only
    }
}

/// A workspace of `profile` with `buffers` attached.
fn attached(profile: Profile, buffers: Arc<dyn Buffers>) -> TestWorkspace {
    let mut ws = TestWorkspace::new(profile);
    ws.ctx = ToolContext::new(Workspace::new(ws.root()).unwrap().with_buffers(buffers));
    ws
}

fn with_editor(profile: Profile) -> (TestWorkspace, Arc<Editor>) {
    let editor = Arc::new(Editor::default());
    (attached(profile, editor.clone()), editor)
}

#[test]
fn read_file_shows_the_editors_text_numbered() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("a.txt", "on disk\n");
    editor.open(ws.path("a.txt"), "one\ntwo\nthree\n");

    let text = expect_ok(&ws.call("read_file", json!({"path": "a.txt"})));
    assert_eq!(text, "1 | one\n2 | two\n3 | three");
    let text =
        expect_ok(&ws.call("read_file", json!({"path": "a.txt", "start_line": 2, "end_line": 2})));
    assert_eq!(text, "2 | two");
    let text = expect_ok(&ws.call("read_file", json!({"path": "a.txt", "start_line": 9})));
    assert_eq!(text, "(no lines from 9: 'a.txt' has 3 lines)");
    assert_eq!(editor.calls(), vec![Call::Read(ws.path("a.txt")); 3]);
}

#[test]
fn a_failed_buffer_read_falls_back_to_the_disk() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("a.txt", "from disk\n");
    let text = expect_ok(&ws.call("read_file", json!({"path": "a.txt"})));
    assert_eq!(text, "1 | from disk");
    assert_eq!(editor.calls(), [Call::Read(ws.path("a.txt"))]);
}

#[test]
fn a_binary_file_is_refused_without_asking_the_editor() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("bin.dat", b"\x00\x01\x02");
    editor.open(ws.path("bin.dat"), "text the editor made up\n");
    let message = expect_error(&ws.call("read_file", json!({"path": "bin.dat"})));
    assert!(message.contains("binary"), "{message}");
    assert_eq!(editor.calls(), []);
}

#[test]
fn edit_file_edits_the_buffer_and_writes_through_the_editor() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("src.rs", "fn main() {}\n");
    editor.open(ws.path("src.rs"), "fn main() {}\n// unsaved\n");

    // old_str exists only in the buffer: the edit read the editor's text.
    let args = json!({"path": "src.rs", "old_str": "// unsaved", "new_str": "// edited"});
    let text = expect_ok(&ws.call("edit_file", args));
    assert!(text.contains("Edited 'src.rs' (1 replacement)"), "{text}");
    assert!(text.contains("-// unsaved\n+// edited"), "{text}");
    assert_eq!(
        editor.calls(),
        [
            Call::Read(ws.path("src.rs")),
            Call::Write(ws.path("src.rs"), "fn main() {}\n// edited\n".to_string())
        ]
    );
    assert_eq!(ws.read("src.rs"), "fn main() {}\n", "the disk is the editor's to write");
}

#[test]
fn the_edit_preview_is_the_diff_of_the_buffer() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("a.txt", "saved\n");
    editor.open(ws.path("a.txt"), "saved\nunsaved\n");
    let args = json!({"path": "a.txt", "old_str": "unsaved", "new_str": "changed"});
    let Preview::Diff { diff, created, .. } = ws.registry.preview(&ws.ctx, "edit_file", &args)
    else {
        panic!("not a diff")
    };
    assert!(!created);
    assert!(diff.contains(" saved\n-unsaved\n+changed\n"), "{diff}");
    assert_eq!(editor.writes(), [], "a preview writes nothing");
    assert_eq!(ws.read("a.txt"), "saved\n");

    // And the edit then writes exactly what the preview showed.
    expect_ok(&ws.call("edit_file", args));
    assert_eq!(editor.writes(), [Call::Write(ws.path("a.txt"), "saved\nchanged\n".to_string())]);
}

#[test]
fn write_file_creates_overwrites_and_appends_through_the_editor() {
    let (ws, editor) = with_editor(Profile::Code);

    // A new file: its folders are made through the jail, its content by
    // the editor.
    let text =
        expect_ok(&ws.call("write_file", json!({"path": "deep/er/new.txt", "content": "hi\n"})));
    assert_eq!(text, "Created 'deep/er/new.txt' (3 bytes, 1 lines)");
    assert!(ws.path("deep/er").is_dir());
    assert!(!ws.path("deep/er/new.txt").exists(), "the editor writes the file");
    assert_eq!(editor.writes(), [Call::Write(ws.path("deep/er/new.txt"), "hi\n".to_string())]);

    ws.write("old.txt", "disk\n");
    let text = expect_ok(&ws.call("write_file", json!({"path": "old.txt", "content": "new\n"})));
    assert_eq!(text, "Overwrote 'old.txt' (4 bytes, 1 lines)");
    assert_eq!(editor.writes()[1], Call::Write(ws.path("old.txt"), "new\n".to_string()));
    assert_eq!(ws.read("old.txt"), "disk\n");

    // An append adds to the editor's text, not to the disk's.
    editor.open(ws.path("log.txt"), "a\nunsaved b\n");
    ws.write("log.txt", "a\n");
    let args = json!({"path": "log.txt", "content": "c\n", "mode": "append"});
    let text = expect_ok(&ws.call("write_file", args));
    assert_eq!(text, "Appended 2 bytes to 'log.txt' (now 14 bytes, 3 lines)");
    assert_eq!(
        editor.writes()[2],
        Call::Write(ws.path("log.txt"), "a\nunsaved b\nc\n".to_string())
    );
    assert_eq!(ws.read("log.txt"), "a\n");
}

#[test]
fn the_write_preview_starts_from_the_buffer() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("log.txt", "a\n");
    editor.open(ws.path("log.txt"), "a\nunsaved\n");
    let args = json!({"path": "log.txt", "content": "c\n", "mode": "append"});
    let Preview::Diff { diff, .. } = ws.registry.preview(&ws.ctx, "write_file", &args) else {
        panic!("not a diff")
    };
    assert!(diff.contains(" a\n unsaved\n+c\n"), "{diff}");
    assert_eq!(editor.writes(), []);
}

#[test]
fn an_editor_that_cannot_write_fails_the_call() {
    let (ws, editor) = with_editor(Profile::Code);
    ws.write("a.txt", "x\n");
    *editor.write_error.lock().unwrap() = Some("the buffer is read-only".to_string());
    let message = expect_error(&ws.call("write_file", json!({"path": "a.txt", "content": "y\n"})));
    assert_eq!(message, "The editor could not write 'a.txt': the buffer is read-only");
    assert_eq!(ws.read("a.txt"), "x\n");
}

#[test]
fn nothing_outside_the_workspace_reaches_the_editor() {
    let (ws, editor) = with_editor(Profile::Code);
    let outside = ws.outside().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    symlink(outside.join("secret.txt"), ws.path("link_file")).unwrap();
    symlink(&outside, ws.path("link_dir")).unwrap();
    editor.open(outside.join("secret.txt"), "secret\n");
    editor.open(PathBuf::from("/etc/passwd"), "root\n");

    let paths = ["../outside/secret.txt", "/etc/passwd", "link_file", "link_dir/secret.txt"];
    for path in paths {
        let calls = [
            ("read_file", json!({"path": path})),
            ("edit_file", json!({"path": path, "old_str": "secret", "new_str": "x"})),
            ("write_file", json!({"path": path, "content": "x\n"})),
            ("write_file", json!({"path": path, "content": "x\n", "mode": "append"})),
        ];
        for (tool, args) in calls {
            let message = expect_error(&ws.call(tool, args.clone()));
            assert!(message.contains("outside the workspace"), "{tool} {path}: {message}");
            if tool != "read_file" {
                let Preview::Invalid { .. } = ws.registry.preview(&ws.ctx, tool, &args) else {
                    panic!("{tool} {path}: the preview did not refuse")
                };
            }
        }
    }
    assert_eq!(editor.calls(), [], "the editor was asked about a path outside");
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), "secret\n");
}

#[test]
fn a_hard_linked_file_is_written_on_the_disk_as_its_own_file() {
    let (ws, editor) = with_editor(Profile::Code);
    let outside = ws.outside().join("shared.txt");
    std::fs::write(&outside, "shared\n").unwrap();
    std::fs::hard_link(&outside, ws.path("linked.txt")).unwrap();

    let args = json!({"path": "linked.txt", "old_str": "shared", "new_str": "mine"});
    let text = expect_ok(&ws.call("edit_file", args));
    assert!(text.contains("now a file of its own"), "{text}");
    assert_eq!(editor.writes(), [], "an editor saving in place would change the other names");
    assert_eq!(ws.read("linked.txt"), "mine\n");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "shared\n");
}

#[test]
fn the_vault_reads_and_writes_notes_through_the_editor() {
    let (ws, editor) = with_editor(Profile::Vault);
    ws.write("Daily/today.md", "# Today\n");
    editor.open(ws.path("Daily/today.md"), "# Today\n- unsaved\n");

    let text = expect_ok(&ws.call("read_note", json!({"path": "Daily/today"})));
    assert_eq!(text, "# Today\n- unsaved\n");
    // Found by its name alone, then read from the editor too.
    let text = expect_ok(&ws.call("read_note", json!({"path": "TODAY"})));
    assert!(text.ends_with("# Today\n- unsaved\n"), "{text}");

    let args = json!({"path": "Daily/today", "content": "- more\n", "mode": "append"});
    let Preview::Diff { diff, .. } = ws.registry.preview(&ws.ctx, "create_note", &args) else {
        panic!("not a diff")
    };
    assert!(diff.contains(" - unsaved\n+- more\n"), "{diff}");
    expect_ok(&ws.call("create_note", args));
    expect_ok(&ws.call("create_note", json!({"path": "Ideas/new", "content": "# New\n"})));
    assert_eq!(
        editor.writes(),
        [
            Call::Write(ws.path("Daily/today.md"), "# Today\n- unsaved\n- more\n".to_string()),
            Call::Write(ws.path("Ideas/new.md"), "# New\n".to_string()),
        ]
    );
    assert!(ws.path("Ideas").is_dir());
    assert!(!ws.path("Ideas/new.md").exists());
    assert_eq!(ws.read("Daily/today.md"), "# Today\n");

    let message =
        expect_error(&ws.call("create_note", json!({"path": "/etc/evil", "content": "x"})));
    assert!(message.contains("outside the workspace"), "{message}");
    assert_eq!(editor.writes().len(), 2);
}

/// An editor that reads and writes by path on the disk, as a real one does
/// for a file it has no buffer of, and runs `meddle` (a folder or file
/// swapped for a symlink) just before it reads.
struct PathEditor {
    meddle: Box<dyn Fn() + Send + Sync>,
    calls: Mutex<Vec<Call>>,
}

impl Buffers for PathEditor {
    fn read(&self, path: &Path) -> Result<String, String> {
        (self.meddle)();
        self.calls.lock().unwrap().push(Call::Read(path.to_path_buf()));
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        self.calls.lock().unwrap().push(Call::Write(path.to_path_buf(), text.to_string()));
        std::fs::write(path, text).map_err(|e| e.to_string())
    }
}

/// A workspace with `dir/f.txt` ("inside"), a secret beside it at
/// `evil/f.txt`, and an editor that swaps `swapped` (`dir` or `dir/f.txt`)
/// for a symlink to the secret's counterpart just before its first read.
fn swapping(swapped: &'static str) -> (TestWorkspace, Arc<PathEditor>, PathBuf) {
    let places: Arc<Mutex<Option<(PathBuf, PathBuf)>>> = Arc::default();
    let armed = Arc::clone(&places);
    let editor = Arc::new(PathEditor {
        meddle: Box::new(move || {
            let Some((root, evil)) = armed.lock().unwrap().take() else { return };
            let place = root.join(swapped);
            std::fs::rename(&place, root.join("moved_away")).unwrap();
            let target = if swapped == "dir" { evil } else { evil.join("f.txt") };
            symlink(target, place).unwrap();
        }),
        calls: Mutex::default(),
    });
    let ws = attached(Profile::Code, editor.clone());
    ws.write("dir/f.txt", "inside\n");
    let evil = ws.outside().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("f.txt"), "SECRET\n").unwrap();
    *places.lock().unwrap() = Some((ws.root().to_path_buf(), evil.clone()));
    (ws, editor, evil.join("f.txt"))
}

#[test]
fn a_folder_swapped_while_the_editor_reads_is_caught() {
    for swapped in ["dir", "dir/f.txt"] {
        let (ws, editor, secret) = swapping(swapped);
        let text = expect_ok(&ws.call("read_file", json!({"path": "dir/f.txt"})));
        // The editor was asked, and read the secret through the swapped-in
        // link: its text is dropped for what the jail opened.
        assert_eq!(editor.calls.lock().unwrap().len(), 1, "{swapped}");
        assert_eq!(text, "1 | inside", "{swapped}");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "SECRET\n");
    }
}

#[test]
fn an_edit_after_a_swap_is_not_handed_to_the_editor() {
    for swapped in ["dir", "dir/f.txt"] {
        let (ws, editor, secret) = swapping(swapped);
        let args = json!({"path": "dir/f.txt", "old_str": "inside", "new_str": "pwned"});
        let message = expect_error(&ws.call("edit_file", args));
        assert!(message.starts_with("Cannot write 'dir/f.txt'"), "{swapped}: {message}");
        let calls = editor.calls.lock().unwrap().clone();
        assert!(calls.iter().all(|c| matches!(c, Call::Read(_))), "{swapped}: {calls:?}");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "SECRET\n");
    }
}

#[test]
fn debug_says_whether_buffers_are_attached() {
    let dir = tempfile::tempdir().unwrap();
    let plain = Workspace::new(dir.path()).unwrap();
    assert!(format!("{plain:?}").contains("buffers: \"none\""), "{plain:?}");
    let attached = plain.clone().with_buffers(Arc::new(Editor::default()));
    assert!(format!("{attached:?}").contains("buffers: \"attached\""), "{attached:?}");
}

#[test]
fn an_editor_that_only_reads_leaves_writes_to_the_disk() {
    let editor = Arc::new(Editor { read_only: true, ..Editor::default() });
    let ws = attached(Profile::Code, editor.clone());
    ws.write("src.rs", "fn main() {}\n");
    editor.open(ws.path("src.rs"), "fn main() {}\n// unsaved\n");
    let args = json!({"path": "src.rs", "old_str": "// unsaved", "new_str": "// edited"});
    expect_ok(&ws.call("edit_file", args));
    expect_ok(&ws.call("write_file", json!({"path": "new.txt", "content": "n\n"})));
    assert_eq!(editor.writes(), [], "nothing was written through the editor");
    assert_eq!(ws.read("src.rs"), "fn main() {}\n// edited\n", "the buffer's edit went to disk");
    assert_eq!(ws.read("new.txt"), "n\n");
}
