//! The jail under a symlink race: a thread swaps a workspace folder with a
//! symlink to a folder outside (`renameat2(RENAME_EXCHANGE)`, as fast as it
//! can) while every file tool runs on paths through that folder. Nothing
//! from outside may appear in any result, and nothing may be created or
//! changed outside, nor any temporary file left anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::common::TestWorkspace;
use axon_tools::Profile;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

/// In every outside file, and in no inside one.
const MARK: &str = "OUTSIDE-SECRET-MARK";
/// A name only the outside folder has.
const OUTSIDE_ONLY: &str = "only-outside.txt";
/// How long the tools run against the swapping; enough for thousands of
/// swaps per call on any machine, and no result depends on the figure.
const RACE_FOR: Duration = Duration::from_secs(4);

#[test]
fn no_tool_leaves_the_workspace_while_a_folder_is_swapped_for_a_symlink() {
    let ws = TestWorkspace::code();
    let vault = Profile::Vault.registry();
    let outside = ws.outside().join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    for name in ["file.txt", "note.md", "log.txt", "sub/deep.txt"] {
        std::fs::write(outside.join(name), format!("{MARK} {name}\n")).unwrap();
    }
    std::fs::write(outside.join(OUTSIDE_ONLY), MARK).unwrap();
    ws.write("race/file.txt", "inside content\n");
    ws.write("race/note.md", "inside note\n");
    ws.write("race/log.txt", "inside log\n");
    ws.write("race/sub/deep.txt", "inside deep\n");
    std::os::unix::fs::symlink(&outside, ws.path("swap")).unwrap();
    let outside_before = tree(&outside);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (race, swap) = (ws.path("race"), ws.path("swap"));
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &race, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
            // Leave the real folder at `race`.
            if std::fs::symlink_metadata(&race).unwrap().file_type().is_symlink() {
                renameat_with(CWD, &race, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
            }
        })
    };

    let code_calls = |i: u64| {
        vec![
            ("read_file", json!({"path": "race/file.txt"})),
            ("read_file", json!({"path": "race/sub/deep.txt"})),
            ("search", json!({"query": "OUTSIDE", "path": "race"})),
            ("search", json!({"query": "OUTSIDE"})),
            ("search", json!({"query": "OUTSIDE", "path": "race/file.txt"})),
            ("list_dir", json!({"path": "race", "depth": 3})),
            ("list_dir", json!({"depth": 4})),
            ("glob", json!({"pattern": "**/*.txt"})),
            ("glob", json!({"pattern": "*", "path": "race"})),
            ("write_file", json!({"path": format!("race/new-{i}.txt"), "content": "new"})),
            ("write_file", json!({"path": "race/sub/deep.txt", "content": "rewritten\n"})),
            ("write_file", json!({"path": "race/log.txt", "content": "more\n", "mode": "append"})),
            (
                "edit_file",
                json!({"path": "race/file.txt", "old_str": "content", "new_str": "text"}),
            ),
            (
                "edit_file",
                json!({"path": "race/file.txt", "old_str": "text", "new_str": "content"}),
            ),
        ]
    };
    let vault_calls = |i: u64| {
        vec![
            ("read_note", json!({"path": "race/note"})),
            ("list_folder", json!({"path": "race"})),
            ("create_note", json!({"path": format!("race/made-{i}"), "content": "note"})),
        ]
    };

    let started = Instant::now();
    let mut calls = 0u64;
    let mut leaks = Vec::new();
    let mut round = 0u64;
    while started.elapsed() < RACE_FOR || round < 3 {
        let mut outputs = Vec::new();
        for (tool, args) in code_calls(round) {
            outputs.push((tool, ws.call(tool, args)));
        }
        for (tool, args) in vault_calls(round) {
            outputs.push((tool, ws.block_on(vault.call(&ws.ctx, tool, args))));
        }
        if round.is_multiple_of(8) {
            let args = json!({"command": "cat file.txt; ls", "workdir": "race"});
            outputs.push(("shell", ws.call("shell", args)));
        }
        for (tool, output) in outputs {
            calls += 1;
            let text = output.text_content();
            if text.contains(MARK) || text.contains(OUTSIDE_ONLY) {
                leaks.push(format!("{tool}: {text}"));
            }
        }
        round += 1;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert!(leaks.is_empty(), "{} of {calls} results leaked: {:#?}", leaks.len(), leaks);
    assert_eq!(tree(&outside), outside_before, "the outside folder changed");
    let leftovers: Vec<String> = tree(ws.base.path())
        .into_iter()
        .filter(|(name, _)| name.contains(".axon-write-"))
        .map(|(name, _)| name)
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    assert!(swaps.load(Ordering::Relaxed) > 0, "the folder was never swapped");
}

/// Every file below `dir` with its content, sorted; folders as names.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.to_string_lossy().into_owned();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.push((name, String::new()));
            out.extend(tree(&path));
        } else if kind.is_file() {
            out.push((name, std::fs::read_to_string(&path).unwrap_or_default()));
        } else {
            out.push((name, "(link)".to_string()));
        }
    }
    out.sort();
    out
}
