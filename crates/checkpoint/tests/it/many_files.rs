//! A snapshot that adds many files at once (the first one of a tree, or a
//! turn that creates a whole folder) stores their blobs in a pack rather
//! than one loose object each: what comes back is still byte for byte and
//! mode for mode, line counts still treat text as text, and the stat data
//! recorded lets the next snapshot see that nothing changed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Fixture, set_exec};

const S: &str = "20260101-000000-many";

/// Whether this git's update-index puts its streamed blobs in one pack.
fn git_packs_in_one_transaction() -> bool {
    let out = Command::new("git").arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches("git version ").split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (2, 37)
}

fn packs(shadow: &Path) -> usize {
    fs::read_dir(shadow.join("objects").join("pack"))
        .map(|dir| {
            dir.filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "pack"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn many_new_files_at_once_go_to_a_pack_and_come_back_exactly() {
    let fx = Fixture::new();
    for i in 0..200 {
        let body = match i % 5 {
            0 => Vec::new(),
            1 => b"x".to_vec(),
            2 => (0u8..=255).cycle().skip(i).take(3000 + i).collect(),
            _ => format!("line one of {i}\nline two\n").repeat(i % 7 + 1).into_bytes(),
        };
        fx.write(&format!("d{}/f{i}.txt", i % 9), body);
    }
    set_exec(&fx.path("d3/f3.txt"), true);
    let before = fx.state();
    let cp = fx.open();
    let first = cp.snapshot(S, "first").unwrap();
    assert_eq!(first.changed, 200);
    if git_packs_in_one_transaction() {
        assert_eq!(packs(cp.shadow_dir()), 1, "the first snapshot's blobs are in one pack");
    }

    // Nothing changed: another handle sees nothing to add.
    let again = fx.open().snapshot(S, "again").unwrap();
    assert_eq!(again.changed, 0);

    // A turn that rewrites, removes and adds many files.
    for i in 0..100 {
        fx.write(&format!("d{}/f{i}.txt", i % 9), format!("rewritten {i}\n"));
    }
    for i in 100..150 {
        fs::remove_file(fx.path(&format!("d{}/f{i}.txt", i % 9))).unwrap();
    }
    for i in 0..80 {
        fx.write(&format!("new/n{i}.txt"), format!("new file {i}\n"));
    }
    set_exec(&fx.path("d3/f3.txt"), false);
    let after = fx.state();
    let turn = cp.snapshot(S, "turn").unwrap();
    assert_eq!(turn.changed, 230);

    let changes = cp.diff_stat(&first.id).unwrap();
    let text = changes.iter().find(|c| c.path == Path::new("d4/f4.txt")).unwrap();
    assert!(text.lines.is_some(), "text files keep line counts: {text:?}");

    let restored = cp.restore(S, &first.id).unwrap();
    assert_eq!(fx.state(), before, "the workspace is byte-identical to the first snapshot");
    assert_eq!(restored.removed.len(), 80);
    cp.restore(S, &restored.backup).unwrap();
    assert_eq!(fx.state(), after);
    cp.restore(S, &turn.id).unwrap();
    assert_eq!(fx.state(), after);
}
