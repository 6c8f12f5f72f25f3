//! A snapshot misses no change, however little time passed since the last
//! one and however the change was made: same-size rewrites within the same
//! second as the last snapshot, new files in folders git has cached
//! as unchanged and in brand-new folders, deleted folders, files that a
//! changed ignore rule uncovers, and snapshots of the last session to be
//! pruned. These guard the fast paths (the index's stat cache and the
//! untracked cache), whose shortcuts must never hide a change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;

use crate::common::{Fixture, shadow_git, user_git};
use axon_checkpoint::{Checkpoints, SkipReason};

const S: &str = "20260102-000000-cdef";

/// The snapshot's file list, one path a line.
fn tree(cp: &Checkpoints, id: &str) -> String {
    let out = shadow_git(cp, &["ls-tree", "-r", "--name-only", id]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// One file's bytes in a snapshot.
fn show(cp: &Checkpoints, id: &str, path: &str) -> Vec<u8> {
    let out = shadow_git(cp, &["show", &format!("{id}:{path}")]);
    assert!(out.status.success(), "{path}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn same_size_rewrites_right_after_a_snapshot_are_caught() {
    let fx = Fixture::new();
    fx.write("f.txt", "v00\n");
    fx.write("dir/g.txt", "g00\n");
    let cp = fx.open();
    cp.snapshot(S, "start").unwrap();
    // Each round runs well within a second of the last snapshot, so the
    // files' times and the index's are racily equal and the size says
    // nothing: git must look at the content.
    for round in 1..=15 {
        fx.write("f.txt", format!("v{round:02}\n"));
        fx.write("dir/g.txt", format!("g{round:02}\n"));
        let snap = cp.snapshot(S, "turn").unwrap();
        assert_eq!(snap.changed, 2, "round {round}");
        assert_eq!(show(&cp, &snap.id, "f.txt"), format!("v{round:02}\n").into_bytes());
        assert_eq!(show(&cp, &snap.id, "dir/g.txt"), format!("g{round:02}\n").into_bytes());
    }
    // And an unchanged tree stays unchanged.
    assert_eq!(cp.snapshot(S, "still").unwrap().changed, 0);
}

#[test]
fn new_files_in_cached_and_new_folders_and_deleted_folders_are_caught() {
    let fx = Fixture::new();
    fx.write("old/a.txt", "a\n");
    fx.write("old/deep/b.txt", "b\n");
    fx.write("gone/x/y.txt", "y\n");
    fx.write("gone/z.txt", "z\n");
    let cp = fx.open();
    cp.snapshot(S, "one").unwrap();
    // A second scan that finds nothing: every folder is now cached.
    assert_eq!(cp.snapshot(S, "two").unwrap().changed, 0);

    fx.write("old/deep/c.txt", "c\n");
    fx.write("new/one/two/three.txt", "3\n");
    fs::remove_dir_all(fx.path("gone")).unwrap();
    let snap = cp.snapshot(S, "three").unwrap();
    assert_eq!(snap.changed, 4, "two new files, two deleted");
    assert_eq!(
        tree(&cp, &snap.id),
        "new/one/two/three.txt\nold/a.txt\nold/deep/b.txt\nold/deep/c.txt\n"
    );

    // Straight away, in folders scanned a moment ago.
    fx.write("new/one/two/four.txt", "4\n");
    fx.write("new/one/five.txt", "5\n");
    let snap = cp.snapshot(S, "four").unwrap();
    assert_eq!(snap.changed, 2);
    assert!(tree(&cp, &snap.id).contains("new/one/five.txt\nnew/one/two/four.txt\n"));

    // An empty folder holds nothing to snapshot; a file put in it later is.
    fs::create_dir(fx.path("later")).unwrap();
    assert_eq!(cp.snapshot(S, "five").unwrap().changed, 0);
    fx.write("later/f.txt", "f\n");
    let snap = cp.snapshot(S, "six").unwrap();
    assert_eq!(snap.changed, 1);
    assert_eq!(show(&cp, &snap.id, "later/f.txt"), b"f\n");

    // A folder emptied and refilled with other names.
    fs::remove_dir_all(fx.path("old/deep")).unwrap();
    fx.write("old/deep/d.txt", "d\n");
    let snap = cp.snapshot(S, "seven").unwrap();
    assert_eq!(snap.changed, 3, "b and c gone, d new");
    let listed = tree(&cp, &snap.id);
    assert!(listed.contains("old/deep/d.txt\n") && !listed.contains("old/deep/b.txt"), "{listed}");
}

#[test]
fn files_uncovered_by_a_changed_ignore_rule_are_caught() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("a.log", "a\n");
    fx.write("sub/b.log", "b\n");
    fx.write("keep.txt", "keep\n");
    fx.write("secret.txt", "s\n");
    user_git(fx.ws.path(), &["init", "-q"]);
    fs::write(fx.path(".git/info/exclude"), "secret.txt\n").unwrap();
    // The rules' own effect, without the small ignored files snapshots
    // otherwise keep (checkpoint.rs tests those).
    let cp = fx.open().with_ignored_budget(axon_checkpoint::IgnoredBudget::NONE);
    cp.snapshot(S, "one").unwrap();
    let snap = cp.snapshot(S, "two").unwrap();
    assert_eq!(tree(&cp, &snap.id), ".gitignore\nkeep.txt\n");

    // The same size, so only the content says the rules changed.
    fx.write(".gitignore", "*.txt\n");
    let snap = cp.snapshot(S, "three").unwrap();
    assert_eq!(tree(&cp, &snap.id), ".gitignore\na.log\nsub/b.log\n");

    fs::write(fx.path(".git/info/exclude"), "").unwrap();
    fx.write(".gitignore", "");
    let snap = cp.snapshot(S, "four").unwrap();
    assert_eq!(tree(&cp, &snap.id), ".gitignore\na.log\nkeep.txt\nsecret.txt\nsub/b.log\n");
}

#[test]
fn a_nested_repository_is_left_out_and_reported_every_time() {
    let fx = Fixture::new();
    fx.write("top.txt", "top\n");
    fx.write("inner/file.txt", "inner\n");
    user_git(&fx.path("inner"), &["init", "-q"]);
    let cp = fx.open();
    for label in ["one", "two"] {
        let snap = cp.snapshot(S, label).unwrap();
        assert_eq!(tree(&cp, &snap.id), "top.txt\n");
        let nested: Vec<_> = snap
            .skipped
            .iter()
            .filter(|s| s.reason == SkipReason::NestedRepository)
            .map(|s| s.path.clone())
            .collect();
        assert_eq!(nested, vec![PathBuf::from("inner")], "{label}");
    }
}

#[test]
fn pruning_the_session_of_the_last_snapshot_frees_it_and_snapshots_go_on() {
    let fx = Fixture::new();
    fx.write("f.txt", "kept\n");
    let cp = fx.open();
    let kept = cp.snapshot("keep", "k").unwrap();
    fx.write("f.txt", "only in the pruned session\n");
    let gone = cp.snapshot("gone", "g").unwrap();
    assert_eq!(cp.prune_session("gone").unwrap(), 1);
    let exists = shadow_git(&cp, &["cat-file", "-e", &gone.id]);
    assert!(!exists.status.success(), "the last snapshot went with its session");

    fx.write("f.txt", "after\n");
    let snap = cp.snapshot("keep", "after").unwrap();
    assert_eq!(snap.changed, 1);
    assert_eq!(show(&cp, &snap.id, "f.txt"), b"after\n");
    assert_eq!(cp.snapshot("keep", "again").unwrap().changed, 0);
    cp.restore("keep", &kept.id).unwrap();
    assert_eq!(fx.read("f.txt"), b"kept\n");
}
