//! Snapshots and restores on real workspaces with the real git CLI: bytes
//! and modes come back exactly, new files go, ignored and too-large files
//! and the user's own `.git` are never touched, two handles on one
//! workspace do not corrupt it, and a pruned session's snapshots go.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Fixture, set_exec, shadow_git, user_git};
use axon_checkpoint::{ChangeKind, CheckpointError, Checkpoints, IgnoredBudget, SkipReason};

const S: &str = "20260101-000000-abcd";

#[test]
fn edits_writes_and_shell_changes_are_rewound_byte_for_byte() {
    let fx = Fixture::new();
    fx.write("src/main.rs", "fn main() {}\n");
    fx.write("notes.txt", "no trailing newline");
    fx.write("blob.bin", (0u8..=255).cycle().take(70_000).collect::<Vec<u8>>());
    fx.write("run.sh", "#!/bin/sh\necho hi\n");
    set_exec(&fx.path("run.sh"), true);
    fx.write("doomed/only.txt", "will be deleted\n");
    let before = fx.state();
    let cp = fx.open();
    let first = cp.snapshot(S, "turn 1").unwrap();
    assert!(first.skipped.is_empty(), "{:?}", first.skipped);

    // An edit.
    fx.write("src/main.rs", "fn main() { println!(\"edited\"); }\n");
    let second = cp.snapshot(S, "turn 2").unwrap();
    assert_eq!(second.changed, 1);
    // A whole write, a new file, a deletion, a mode change.
    fx.write("blob.bin", [0u8, 159, 146, 150, 0, 0xff]);
    fx.write("new/dir/created.txt", "created after\n");
    fs::remove_file(fx.path("doomed/only.txt")).unwrap();
    set_exec(&fx.path("run.sh"), false);
    let third = cp.snapshot(S, "turn 3").unwrap();
    assert_eq!(third.changed, 4);
    // A change made by a shell command.
    let status = Command::new("sh")
        .current_dir(fx.ws.path())
        .args(["-c", "printf ' and more' >> notes.txt && rm src/main.rs"])
        .status()
        .unwrap();
    assert!(status.success());
    let after = fx.state();

    let changes = cp.diff_stat(&first.id).unwrap();
    let kind_of =
        |p: &str| changes.iter().find(|c| c.path.as_path() == Path::new(p)).map(|c| c.kind);
    assert_eq!(kind_of("src/main.rs"), Some(ChangeKind::Create));
    assert_eq!(kind_of("notes.txt"), Some(ChangeKind::Rewrite));
    assert_eq!(kind_of("run.sh"), Some(ChangeKind::Rewrite));
    assert_eq!(kind_of("doomed/only.txt"), Some(ChangeKind::Create));
    assert_eq!(kind_of("new/dir/created.txt"), Some(ChangeKind::Remove));
    assert_eq!(changes.len(), 6, "{changes:?}");
    let notes = changes.iter().find(|c| c.path.as_path() == Path::new("notes.txt")).unwrap();
    assert_eq!(notes.lines, Some((1, 1)));
    let blob = changes.iter().find(|c| c.path.as_path() == Path::new("blob.bin")).unwrap();
    assert_eq!(blob.lines, None, "binary files have no line counts");

    let restored = cp.restore(S, &first.id).unwrap();
    assert_eq!(fx.state(), before, "the workspace is byte-identical to the first snapshot");
    assert!(!fx.path("new").exists(), "folders emptied by the restore are removed");
    assert_eq!(restored.removed, vec![PathBuf::from("new/dir/created.txt")]);
    assert_eq!(restored.written.len(), 5, "{:?}", restored.written);
    assert!(restored.skipped.is_empty());

    // The restore itself can be undone.
    cp.restore(S, &restored.backup).unwrap();
    assert_eq!(fx.state(), after);

    // A short prefix names a snapshot too, and later snapshots stay valid.
    cp.restore(S, &second.id[..10]).unwrap();
    assert_eq!(fx.read("src/main.rs"), b"fn main() { println!(\"edited\"); }\n");
    assert_eq!(fx.read("notes.txt"), b"no trailing newline");
    assert!(fx.path("doomed/only.txt").exists());

    let listed = cp.list(S).unwrap();
    let labels: Vec<&str> = listed.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(&labels[..3], ["turn 1", "turn 2", "turn 3"]);
    assert_eq!(listed.len(), 6, "three turns and three backups: {labels:?}");
}

#[test]
fn a_snapshot_with_no_change_is_cheap_and_still_a_snapshot() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let cp = fx.open();
    let first = cp.snapshot(S, "one").unwrap();
    let again = cp.snapshot(S, "two").unwrap();
    assert_eq!(again.changed, 0);
    assert!(cp.diff_stat(&first.id).unwrap().is_empty());
    let restored = cp.restore(S, &again.id).unwrap();
    assert!(restored.written.is_empty() && restored.removed.is_empty());
    // A touched file with the same bytes is not a change.
    fx.write("a.txt", "a\n");
    assert_eq!(cp.snapshot(S, "three").unwrap().changed, 0);
}

/// Issue 36 §2: a small ignored file (a log, a `.env.local`) is held and
/// comes back; a build folder and a file over the size limit are left alone
/// and reported.
#[test]
fn small_ignored_files_come_back_and_build_folders_and_large_files_are_left_alone() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\nbuild/\n");
    fx.write("app.log", "log v1\n");
    fx.write("build/out.o", "object v1\n");
    fx.write("keep.txt", "keep v1\n");
    let big = fx.path("huge.bin");
    fs::File::create(&big).unwrap().set_len(11 * 1024 * 1024).unwrap();
    let cp = fx.open();
    let first = cp.snapshot(S, "one").unwrap();
    let mut skipped: Vec<_> = first.skipped.iter().map(|s| (s.path.clone(), s.reason)).collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        vec![
            (PathBuf::from("build"), SkipReason::BuildFolder),
            (PathBuf::from("huge.bin"), SkipReason::TooLarge(11 * 1024 * 1024)),
        ]
    );
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &first.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), ".gitignore\napp.log\nkeep.txt\n");

    fx.write("app.log", "log v2\n");
    fx.write("build/out.o", "object v2\n");
    fx.write("build/new.o", "new object\n");
    fx.write("keep.txt", "keep v2\n");
    fs::File::create(&big).unwrap().set_len(12 * 1024 * 1024).unwrap();
    let restored = cp.restore(S, &first.id).unwrap();
    assert_eq!(restored.written, vec![PathBuf::from("app.log"), PathBuf::from("keep.txt")]);
    assert!(restored.removed.is_empty());
    assert_eq!(fx.read("keep.txt"), b"keep v1\n");
    assert_eq!(fx.read("app.log"), b"log v1\n");
    assert_eq!(fx.read("build/out.o"), b"object v2\n");
    assert_eq!(fx.read("build/new.o"), b"new object\n");
    assert_eq!(fs::metadata(&big).unwrap().len(), 12 * 1024 * 1024);
}

#[test]
fn a_tracked_file_that_grows_too_large_or_becomes_ignored_leaves_the_snapshots() {
    let fx = Fixture::new();
    fx.write("data.bin", "small\n");
    fx.write("cache.txt", "cache v1\n");
    let cp = fx.open().with_max_file_bytes(1000).with_ignored_budget(IgnoredBudget::NONE);
    let first = cp.snapshot(S, "one").unwrap();
    fx.write("data.bin", vec![b'x'; 2000]);
    fx.write(".gitignore", "cache.txt\n");
    fx.write("cache.txt", "cache v2\n");
    let second = cp.snapshot(S, "two").unwrap();
    assert_eq!(second.skipped[0].reason, SkipReason::TooLarge(2000));
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &second.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), ".gitignore\n");
    // Restoring the first snapshot does not overwrite either: they are taken.
    let restored = cp.restore(S, &first.id).unwrap();
    let mut skipped: Vec<_> = restored.skipped.iter().map(|s| (s.path.clone(), s.reason)).collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        vec![
            (PathBuf::from("cache.txt"), SkipReason::Occupied),
            (PathBuf::from("data.bin"), SkipReason::TooLarge(2000)),
        ]
    );
    assert_eq!(fx.read("cache.txt"), b"cache v2\n");
    assert_eq!(fx.read("data.bin").len(), 2000);
    assert!(!fx.path(".gitignore").exists(), "the first snapshot had no .gitignore");
}

#[test]
fn the_users_own_git_repository_is_never_touched() {
    let fx = Fixture::new();
    fx.write("tracked.txt", "v1\n");
    fx.write("secret.txt", "excluded by the user's info/exclude\n");
    user_git(fx.ws.path(), &["init", "-q"]);
    fs::write(fx.path(".git/info/exclude"), "secret.txt\n").unwrap();
    user_git(fx.ws.path(), &["add", "tracked.txt"]);
    user_git(fx.ws.path(), &["commit", "-q", "-m", "user commit"]);
    let head = fx.read(".git/HEAD");
    let index = fx.read(".git/index");
    let refs = fx.read(".git/refs/heads/master").to_vec();
    let user_git_state = common::state(&fx.path(".git"));

    let cp = fx.open();
    let first = cp.snapshot(S, "one").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &first.id]);
    // The user's excluded file is small: held in the shadow repository, and
    // never added to the user's own.
    assert_eq!(String::from_utf8_lossy(&tree.stdout), "secret.txt\ntracked.txt\n");
    fx.write("tracked.txt", "v2\n");
    fx.write("secret.txt", "changed\n");
    cp.snapshot(S, "two").unwrap();
    cp.restore(S, &first.id).unwrap();
    assert_eq!(fx.read("tracked.txt"), b"v1\n");
    assert_eq!(fx.read("secret.txt"), b"excluded by the user's info/exclude\n");
    assert_eq!(fx.read(".git/HEAD"), head);
    assert_eq!(fx.read(".git/index"), index);
    assert_eq!(fx.read(".git/refs/heads/master"), refs);
    assert_eq!(common::state(&fx.path(".git")), user_git_state);
    assert!(!cp.shadow_dir().starts_with(fx.ws.path()));
}

#[test]
fn a_change_to_the_users_info_exclude_takes_tracked_files_out() {
    let fx = Fixture::new();
    fx.write("keep.txt", "keep\n");
    fx.write("late.txt", "excluded later\n");
    user_git(fx.ws.path(), &["init", "-q"]);
    fs::write(fx.path(".git/info/exclude"), "").unwrap();
    let cp = fx.open().with_ignored_budget(IgnoredBudget::NONE);
    let first = cp.snapshot(S, "one").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &first.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), "keep.txt\nlate.txt\n");
    fs::write(fx.path(".git/info/exclude"), "late.txt\n").unwrap();
    let second = cp.snapshot(S, "two").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &second.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), "keep.txt\n");
    assert_eq!(second.changed, 1);
}

#[test]
fn a_file_and_a_folder_can_swap_places() {
    let fx = Fixture::new();
    fx.write("a/b.txt", "inside\n");
    fx.write("c", "a file\n");
    let before = fx.state();
    let cp = fx.open();
    let first = cp.snapshot(S, "one").unwrap();
    fs::remove_dir_all(fx.path("a")).unwrap();
    fx.write("a", "now a file\n");
    fs::remove_file(fx.path("c")).unwrap();
    fx.write("c/d.txt", "now a folder\n");
    let second = cp.snapshot(S, "two").unwrap();
    cp.restore(S, &first.id).unwrap();
    assert_eq!(fx.state(), before);
    cp.restore(S, &second.id).unwrap();
    assert_eq!(fx.read("a"), b"now a file\n");
    assert_eq!(fx.read("c/d.txt"), b"now a folder\n");
}

#[test]
fn two_handles_on_one_workspace_from_two_threads_keep_the_repository_sound() {
    let fx = Fixture::new();
    fx.write("shared.txt", "0\n");
    let rounds = 15;
    std::thread::scope(|scope| {
        for worker in ["left", "right"] {
            let fx = &fx;
            scope.spawn(move || {
                let cp = Checkpoints::open(fx.data.path(), fx.ws.path()).unwrap();
                for round in 0..rounds {
                    fx.write(&format!("{worker}.txt"), format!("{round}\n"));
                    cp.snapshot(&format!("{S}-{worker}"), &format!("{worker} {round}")).unwrap();
                }
            });
        }
    });
    let cp = fx.open();
    for worker in ["left", "right"] {
        let listed = cp.list(&format!("{S}-{worker}")).unwrap();
        assert_eq!(listed.len(), rounds);
        let last = &listed[rounds - 1];
        let blob = shadow_git(&cp, &["show", &format!("{}:{worker}.txt", last.id)]);
        assert_eq!(blob.stdout, format!("{}\n", rounds - 1).into_bytes());
    }
    let fsck = shadow_git(&cp, &["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success(), "{}", String::from_utf8_lossy(&fsck.stderr));
}

#[test]
fn pruning_a_session_forgets_its_snapshots_and_frees_what_only_it_held() {
    let fx = Fixture::new();
    fx.write("f.txt", "only in session a\n");
    let cp = fx.open();
    let a = cp.snapshot("sess-a", "a1").unwrap();
    let blob = shadow_git(&cp, &["rev-parse", &format!("{}:f.txt", a.id)]);
    let blob = String::from_utf8_lossy(&blob.stdout).trim().to_string();
    fx.write("f.txt", "in session b\n");
    let b = cp.snapshot("sess-b", "b1").unwrap();
    assert_eq!(cp.sessions().unwrap(), ["sess-a", "sess-b"]);

    assert_eq!(cp.prune_session("sess-a").unwrap(), 1);
    assert!(cp.list("sess-a").unwrap().is_empty());
    assert_eq!(cp.sessions().unwrap(), ["sess-b"]);
    let refs = shadow_git(&cp, &["for-each-ref", "refs/axon/sess-a/"]);
    assert!(refs.stdout.is_empty());
    assert!(!shadow_git(&cp, &["cat-file", "-e", &a.id]).status.success(), "commit collected");
    assert!(!shadow_git(&cp, &["cat-file", "-e", &blob]).status.success(), "blob collected");
    assert!(matches!(cp.restore("sess-b", &a.id), Err(CheckpointError::UnknownId { .. })));
    // The other session is intact.
    fx.write("f.txt", "later\n");
    cp.restore("sess-b", &b.id).unwrap();
    assert_eq!(fx.read("f.txt"), b"in session b\n");
    assert_eq!(cp.prune_session("sess-none").unwrap(), 0);
}

#[test]
fn bad_ids_and_sessions_are_refused_with_a_reason() {
    let fx = Fixture::new();
    fx.write("a", "a");
    let cp = fx.open();
    cp.snapshot(S, "one").unwrap();
    for id in ["--help", "HEAD", "0000000000", "ab", "refs/axon"] {
        let err = cp.restore(S, id).unwrap_err();
        assert!(matches!(err, CheckpointError::UnknownId { .. }), "{id}: {err}");
    }
    for session in ["", "../x", "a/b", ".hidden", "x.lock", "a b"] {
        let err = cp.snapshot(session, "x").unwrap_err();
        assert!(matches!(err, CheckpointError::BadSession { .. }), "{session:?}: {err}");
    }
    let missing = fx.path("no-such-dir");
    let err = Checkpoints::open(fx.data.path(), &missing).unwrap_err();
    assert!(matches!(err, CheckpointError::WorkspaceUnreadable { .. }));
    assert!(err.to_string().contains("no-such-dir"), "{err}");
}

#[test]
fn gitattributes_cannot_change_the_bytes_that_come_back() {
    let fx = Fixture::new();
    fx.write(".gitattributes", "* text eol=crlf\n*.txt ident\n");
    fx.write("dos.txt", "line one\r\nline two\n$Id$\n");
    let before = fx.state();
    let cp = fx.open();
    let first = cp.snapshot(S, "one").unwrap();
    fx.write("dos.txt", "other\n");
    cp.restore(S, &first.id).unwrap();
    assert_eq!(fx.state(), before);
}

#[test]
fn git_lock_files_left_by_a_killed_snapshot_do_not_stop_the_next() {
    let fx = Fixture::new();
    fx.write("a.txt", "one\n");
    let checkpoints = fx.open();
    let first = checkpoints.snapshot("s1", "turn 1").unwrap();
    // What a git killed mid-write leaves behind.
    for stale in ["index.lock", "HEAD.lock"] {
        std::fs::write(checkpoints.shadow_dir().join(stale), "").unwrap();
    }
    fx.write("a.txt", "two\n");
    let second = checkpoints.snapshot("s1", "turn 2").unwrap();
    assert_ne!(first.id, second.id);
    checkpoints.restore("s1", &first.id).unwrap();
    assert_eq!(fx.read("a.txt"), b"one\n");
}

#[cfg(unix)]
#[test]
fn snapshots_are_readable_by_the_user_alone() {
    // Issue 30 §2.11: checkpoint objects were 0444 in world-readable
    // folders, and they hold the workspace's .env like any file.
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    fx.write(".env", "API_TOKEN=hunter2hunter2\n");
    let cp = fx.open();
    cp.snapshot(S, "turn 1").unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(fx.data.path()), 0o700);
    assert_eq!(mode(&fx.data.path().join("checkpoints")), 0o700);
    let mut open_to_others = Vec::new();
    let mut stack = vec![fx.data.path().join("checkpoints")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path.clone());
            }
            if path.components().any(|c| c.as_os_str() == "objects") && mode(&path) & 0o077 != 0 {
                open_to_others.push((path.clone(), format!("{:o}", mode(&path))));
            }
        }
    }
    assert!(open_to_others.is_empty(), "{open_to_others:?}");
}

/// Issue 36 §2: what a command destroys among ignored files comes back: a
/// deleted `.env.local` and a deleted ignored folder; a folder over what is
/// left of the budget is left out whole, a file over the per-file limit
/// alone, and axon's own `.axon` never.
#[test]
fn ignored_files_a_command_deleted_come_back_within_the_budget() {
    let fx = Fixture::new();
    fx.write(".gitignore", ".env*\nnotes/\nbig/\n.axon/\n*.bin\ntools-env/\n");
    fx.write("tools-env/pyvenv.cfg", "home = /usr/bin\n");
    fx.write("tools-env/bin/activate", "# a virtual environment's\n");
    fx.write(".env.local", "API_URL=http://localhost\n");
    fx.write("notes/today.md", "remember\n");
    fx.write("notes/deep/older.md", "older\n");
    fx.write("big/a.txt", vec![b'a'; 600]);
    fx.write("big/b.txt", vec![b'b'; 600]);
    fx.write("one.bin", vec![b'x'; 900]);
    fx.write(".axon/state.json", "{}\n");
    fx.write("src.txt", "code\n");
    let budget = IgnoredBudget { file_bytes: 800, total_bytes: 1000 };
    let cp = fx.open().with_ignored_budget(budget);
    let first = cp.snapshot(S, "one").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &first.id]);
    assert_eq!(
        String::from_utf8_lossy(&tree.stdout),
        ".env.local\n.gitignore\nnotes/deep/older.md\nnotes/today.md\nsrc.txt\n"
    );
    let mut skipped: Vec<_> = first.skipped.iter().map(|s| (s.path.clone(), s.reason)).collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert_eq!(skipped[0].0, PathBuf::from("big"));
    assert!(matches!(skipped[0].1, SkipReason::OverBudget(_)), "{skipped:?}");
    assert_eq!(skipped[1], (PathBuf::from("one.bin"), SkipReason::OverBudget(900)));
    // A virtual environment, known by its pyvenv.cfg whatever its name.
    assert_eq!(skipped[2], (PathBuf::from("tools-env"), SkipReason::BuildFolder));

    // `rm -rf` of what git ignores.
    fs::remove_file(fx.path(".env.local")).unwrap();
    fs::remove_dir_all(fx.path("notes")).unwrap();
    let after = cp.snapshot(S, "two").unwrap();
    assert_eq!(after.changed, 3);
    let restored = cp.restore(S, &first.id).unwrap();
    assert_eq!(restored.written.len(), 3, "{restored:?}");
    assert_eq!(fx.read(".env.local"), b"API_URL=http://localhost\n");
    assert_eq!(fx.read("notes/deep/older.md"), b"older\n");
    assert_eq!(fx.read(".axon/state.json"), b"{}\n");
}

/// The budget a session keeps is the workspace's: a later open (`axon
/// rewind` from the command line) snapshots with it too.
#[test]
fn a_kept_ignored_budget_holds_for_every_later_open() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("small.log", vec![b's'; 100]);
    fx.write("large.log", vec![b'l'; 3000]);
    assert_eq!(fx.open().ignored_budget(), IgnoredBudget::default());
    let budget = IgnoredBudget { file_bytes: 1000, total_bytes: 10_000 };
    let cp = fx.open().keep_ignored_budget(budget).unwrap();
    assert_eq!(cp.ignored_budget(), budget);
    let again = fx.open();
    assert_eq!(again.ignored_budget(), budget);
    let snap = again.snapshot(S, "one").unwrap();
    let tree = shadow_git(&again, &["ls-tree", "-r", "--name-only", &snap.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), ".gitignore\nsmall.log\n");
    assert_eq!(snap.skipped[0].reason, SkipReason::OverBudget(3000));
}

/// A restore never removes an ignored file only because the snapshot
/// restored to lacks it: that snapshot may be older than snapshots of
/// ignored files, or the file was over the budget then (found in review).
#[test]
fn restoring_an_older_snapshot_keeps_ignored_files_it_does_not_hold() {
    let fx = Fixture::new();
    fx.write(".gitignore", ".env*\n");
    fx.write(".env.local", "KEEP=me\n");
    fx.write("src.txt", "v1\n");
    // Taken as a snapshot from before ignored files were held.
    let old = fx.open().with_ignored_budget(IgnoredBudget::NONE).snapshot(S, "old").unwrap();
    fx.write("src.txt", "v2\n");
    let cp = fx.open();
    let now = cp.snapshot(S, "now").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &now.id]);
    assert!(String::from_utf8_lossy(&tree.stdout).contains(".env.local"));
    let restored = cp.restore(S, &old.id).unwrap();
    assert_eq!(fx.read("src.txt"), b"v1\n");
    assert_eq!(fx.read(".env.local"), b"KEEP=me\n", "the ignored file is kept");
    assert!(restored.removed.is_empty(), "{restored:?}");
    assert!(
        restored
            .skipped
            .iter()
            .any(|s| s.path == Path::new(".env.local") && s.reason == SkipReason::IgnoredNotHeld),
        "{restored:?}"
    );
}

/// An ignored folder holding a socket or FIFO (a dev server's `tmp/`) does
/// not stop the snapshot; its regular files are held (found in review).
#[test]
fn a_fifo_in_an_ignored_folder_does_not_stop_a_snapshot() {
    let fx = Fixture::new();
    fx.write(".gitignore", "tmp/\n");
    fx.write("tmp/pids/server.pid", "42\n");
    let fifo = fx.path("tmp/pids/control.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let cp = fx.open();
    let snap = cp.snapshot(S, "one").unwrap();
    let tree = shadow_git(&cp, &["ls-tree", "-r", "--name-only", &snap.id]);
    assert_eq!(String::from_utf8_lossy(&tree.stdout), ".gitignore\ntmp/pids/server.pid\n");
}
