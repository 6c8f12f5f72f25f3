//! What each tool does with awkward input: the messages a model gets back
//! and the guarantees DESIGN.md's tool table makes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::common::{TestWorkspace, expect_error, expect_ok};
use serde_json::json;

// ---- read_file ----

#[test]
fn read_file_refuses_binary_files() {
    let ws = TestWorkspace::code();
    // Images are read as images (tests/it/images.rs); other binaries are not.
    ws.write("program.bin", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0");
    let message = expect_error(&ws.call("read_file", json!({"path": "program.bin"})));
    assert!(message.contains("binary file"), "{message}");
}

#[test]
fn read_file_truncates_huge_files_and_says_how_to_read_on() {
    let ws = TestWorkspace::code();
    let content: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
    ws.write("big.txt", &content);
    let output = expect_ok(&ws.call("read_file", json!({"path": "big.txt"})));
    let numbered: Vec<&str> = output.lines().filter(|l| l.contains(" | ")).collect();
    assert_eq!(numbered.len(), 2000);
    assert!(output.ends_with(
        "[Showing lines 1-2000 of 5000. To read on, call read_file with start_line=2001.]"
    ));
    let next = expect_ok(&ws.call("read_file", json!({"path": "big.txt", "start_line": 4999})));
    assert_eq!(next, "4999 | line 4999\n5000 | line 5000");
}

#[test]
fn read_file_clips_very_long_lines() {
    let ws = TestWorkspace::code();
    ws.write("min.js", "x".repeat(10_000));
    let output = expect_ok(&ws.call("read_file", json!({"path": "min.js"})));
    assert_eq!(output, format!("1 | {}… [line cut; 10000 bytes in all]", "x".repeat(2000)));
}

#[test]
fn read_file_ranges_clamp_silently() {
    let ws = TestWorkspace::code();
    ws.write("f.txt", "a\nb\nc\n");
    let tail =
        expect_ok(&ws.call("read_file", json!({"path": "f.txt", "start_line": 0, "end_line": 99})));
    assert_eq!(tail, "1 | a\n2 | b\n3 | c");
    let past = expect_ok(&ws.call("read_file", json!({"path": "f.txt", "start_line": 10})));
    assert_eq!(past, "(no lines from 10: 'f.txt' has 3 lines)");
}

#[test]
fn read_file_shows_crlf_lines_without_cr_and_names_missing_files() {
    let ws = TestWorkspace::code();
    ws.write("dos.txt", "one\r\ntwo\r\n");
    assert_eq!(expect_ok(&ws.call("read_file", json!({"path": "dos.txt"}))), "1 | one\n2 | two");
    assert_eq!(
        expect_error(&ws.call("read_file", json!({"path": "nope/missing.rs"}))),
        "File not found: nope/missing.rs"
    );
    ws.write("empty.txt", "");
    assert_eq!(
        expect_ok(&ws.call("read_file", json!({"path": "empty.txt"}))),
        "('empty.txt' is empty)"
    );
    std::fs::create_dir(ws.path("folder")).unwrap();
    let message = expect_error(&ws.call("read_file", json!({"path": "folder"})));
    assert!(message.contains("use list_dir"), "{message}");
}

// ---- write_file ----

#[test]
fn write_file_creates_parents_and_reports_what_it_did() {
    let ws = TestWorkspace::code();
    let created =
        expect_ok(&ws.call("write_file", json!({"path": "a/b/c.txt", "content": "hi\n"})));
    assert_eq!(created, "Created 'a/b/c.txt' (3 bytes, 1 lines)");
    let appended = expect_ok(
        &ws.call("write_file", json!({"path": "a/b/c.txt", "content": "there", "mode": "append"})),
    );
    assert_eq!(appended, "Appended 5 bytes to 'a/b/c.txt' (now 8 bytes, 2 lines)");
    assert_eq!(ws.read("a/b/c.txt"), "hi\nthere");
    let replaced = expect_ok(&ws.call("write_file", json!({"path": "a/b/c.txt", "content": ""})));
    assert_eq!(replaced, "Overwrote 'a/b/c.txt' (0 bytes, 0 lines)");
}

#[test]
fn write_file_keeps_permissions_and_leaves_no_temp_files() {
    let ws = TestWorkspace::code();
    ws.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(ws.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    expect_ok(&ws.call("write_file", json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})));
    let mode = std::fs::metadata(ws.path("run.sh")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    expect_ok(&ws.call("write_file", json!({"path": "new.txt", "content": "x"})));
    let mode = std::fs::metadata(ws.path("new.txt")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let names: Vec<String> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".axon-write-")), "{names:?}");
}

#[test]
fn write_file_explains_a_file_in_the_way() {
    let ws = TestWorkspace::code();
    ws.write("a", "file");
    let message = expect_error(&ws.call("write_file", json!({"path": "a/b.txt", "content": "x"})));
    assert!(message.contains("a file is in the way"), "{message}");
}

// ---- edit_file ----

#[test]
fn edit_file_with_no_match_names_the_closest_lines() {
    let ws = TestWorkspace::code();
    ws.write("m.rs", "fn main() {\n    println!(\"hello world\");\n}\n");
    let message = expect_error(&ws.call(
        "edit_file",
        json!({"path": "m.rs", "old_str": "println!(\"hello wrld\");", "new_str": "x"}),
    ));
    assert!(message.starts_with("No match for old_str in 'm.rs'."), "{message}");
    assert!(message.contains("2 |     println!(\"hello world\");"), "{message}");
    assert_eq!(ws.read("m.rs"), "fn main() {\n    println!(\"hello world\");\n}\n");
}

#[test]
fn edit_file_points_out_indentation_mismatches() {
    let ws = TestWorkspace::code();
    ws.write("m.py", "def f():\n    return 1\n");
    let message = expect_error(&ws.call(
        "edit_file",
        json!({"path": "m.py", "old_str": "def f():\n  return 1", "new_str": "x"}),
    ));
    assert!(message.contains("matches lines 1-2 if indentation"), "{message}");
}

#[test]
fn edit_file_with_several_matches_lists_their_lines() {
    let ws = TestWorkspace::code();
    ws.write("t.txt", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    let message = expect_error(
        &ws.call("edit_file", json!({"path": "t.txt", "old_str": "x = 1", "new_str": "x = 3"})),
    );
    assert!(message.contains("matches 3 times in 't.txt' (at lines 1, 3, 5)"), "{message}");
    assert!(message.contains("replace_all=true"));
    let all = expect_ok(&ws.call(
        "edit_file",
        json!({"path": "t.txt", "old_str": "x = 1", "new_str": "x = 3", "replace_all": true}),
    ));
    assert!(all.starts_with("Edited 't.txt' (3 replacements)"), "{all}");
    assert_eq!(ws.read("t.txt"), "x = 3\ny = 2\nx = 3\n\nx = 3\n");
}

#[test]
fn edit_file_keeps_crlf_and_returns_a_diff() {
    let ws = TestWorkspace::code();
    ws.write("w.txt", "alpha\r\nbeta\r\ngamma\r\n");
    let output = expect_ok(&ws.call(
        "edit_file",
        json!({"path": "w.txt", "old_str": "alpha\nbeta", "new_str": "alpha\nBETA\nextra"}),
    ));
    assert_eq!(ws.read("w.txt"), "alpha\r\nBETA\r\nextra\r\ngamma\r\n");
    assert!(output.contains("--- a/w.txt"), "{output}");
    assert!(output.contains("-beta"), "{output}");
    assert!(output.contains("+BETA"), "{output}");
}

#[test]
fn edit_file_refuses_empty_and_no_op_edits() {
    let ws = TestWorkspace::code();
    ws.write("f.txt", "abc");
    let empty = expect_error(
        &ws.call("edit_file", json!({"path": "f.txt", "old_str": "", "new_str": "x"})),
    );
    assert!(empty.contains("old_str is empty"), "{empty}");
    let same = expect_error(
        &ws.call("edit_file", json!({"path": "f.txt", "old_str": "b", "new_str": "b"})),
    );
    assert!(same.contains("nothing would change"), "{same}");
}

// ---- list_dir ----

#[test]
fn list_dir_draws_a_sorted_tree_and_skips_ignored_entries() {
    let ws = TestWorkspace::code();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "");
    ws.write("src/lib.rs", "");
    ws.write("README.md", "");
    ws.write("debug.log", "");
    ws.write("target/big.bin", "");
    ws.write(".git/HEAD", "");
    let output = expect_ok(&ws.call("list_dir", json!({})));
    assert_eq!(output, "./\n  .gitignore\n  README.md\n  src/\n    lib.rs\n    main.rs");
    let shallow = expect_ok(&ws.call("list_dir", json!({"path": "src", "depth": 1})));
    assert_eq!(shallow, "src/\n  lib.rs\n  main.rs");
    assert_eq!(
        expect_error(&ws.call("list_dir", json!({"path": "nope"}))),
        "Folder not found: nope"
    );
}

// ---- search ----

#[test]
fn search_reports_invalid_regex() {
    let ws = TestWorkspace::code();
    ws.write("a.txt", "x");
    let message = expect_error(&ws.call("search", json!({"query": "fn (", "regex": true})));
    assert!(message.starts_with("Invalid regex 'fn (':"), "{message}");
    // The same text as a literal is fine.
    let literal = expect_ok(&ws.call("search", json!({"query": "fn ("})));
    assert_eq!(literal, "No matches for 'fn ('.");
}

#[test]
fn search_respects_gitignore_skips_binaries_and_filters_by_glob() {
    let ws = TestWorkspace::code();
    ws.write(".gitignore", "ignored/\n");
    ws.write("ignored/a.txt", "needle");
    ws.write("bin.dat", b"needle\0\x01\x02");
    ws.write(".github/ci.yml", "needle");
    ws.write("src/a.rs", "let needle = 1;");
    ws.write("src/b.py", "NEEDLE = 2");
    let output = expect_ok(&ws.call("search", json!({"query": "needle"})));
    assert_eq!(
        output,
        "2 matches in 2 files\n\n.github/ci.yml\n1:1: needle\n\nsrc/a.rs\n1:5: let needle = 1;"
    );
    let insensitive = expect_ok(
        &ws.call("search", json!({"query": "needle", "case_sensitive": false, "glob": "*.py"})),
    );
    assert_eq!(insensitive, "1 match in 1 file\n\nsrc/b.py\n1:1: NEEDLE = 2");
    let in_file = expect_ok(&ws.call("search", json!({"query": "needle", "path": "src/a.rs"})));
    assert!(in_file.starts_with("1 match in 1 file"), "{in_file}");
    let message = expect_error(&ws.call("search", json!({"query": ""})));
    assert!(message.contains("query is empty"));
}

#[test]
fn search_results_are_the_same_on_every_run() {
    let ws = TestWorkspace::code();
    for i in 0..40 {
        ws.write(&format!("d{}/f{i}.txt", i % 7), "hit\nhit\nmiss\n".repeat(3));
    }
    let first = expect_ok(&ws.call("search", json!({"query": "hit", "max_results": 25})));
    for _ in 0..5 {
        assert_eq!(
            expect_ok(&ws.call("search", json!({"query": "hit", "max_results": 25}))),
            first
        );
    }
    assert!(first.starts_with("240 matches in 40 files (showing the first 25)"), "{first}");
}

// ---- shell ----

#[test]
fn shell_timeout_kills_the_whole_process_group() {
    let ws = TestWorkspace::code();
    // The timeout leaves a busy machine ample time to start the shell and write
    // the pid before the kill; the bound below only says the call did not wait
    // for `sleep 30` (held open pipes), so it is far from any scheduling delay.
    let started = Instant::now();
    let output = ws.call(
        "shell",
        json!({"command": "sleep 30 & echo $! > bg.pid; echo started; sleep 30", "timeout_ms": 2000}),
    );
    let text = expect_error(&output);
    assert!(started.elapsed() < Duration::from_secs(25), "took {:?}", started.elapsed());
    assert!(text.starts_with("Command timed out after 2000 ms and was killed."), "{text}");
    assert!(text.contains("stdout:\nstarted"), "{text}");
    let pid = ws.read("bg.pid").trim().to_string();
    assert!(!process_alive(&pid), "background process {pid} survived the timeout");
}

#[test]
fn shell_kills_background_processes_when_the_command_returns() {
    let ws = TestWorkspace::code();
    let output =
        expect_ok(&ws.call("shell", json!({"command": "sleep 30 & echo $! > bg.pid; echo done"})));
    assert!(output.contains("stdout:\ndone"), "{output}");
    let pid = ws.read("bg.pid").trim().to_string();
    assert!(!process_alive(&pid), "background process {pid} survived");
}

#[test]
fn shell_cancellation_kills_the_process_group() {
    let ws = TestWorkspace::code();
    let call = ws.registry.call(
        &ws.ctx,
        "shell",
        json!({"command": "sleep 30 & echo $! > bg.pid; sleep 30"}),
    );
    // Dropping the call's future is how the agent cancels a tool; it is
    // dropped once the background pid is written, however long the shell
    // takes to get there on a busy machine.
    let pid_file = ws.path("bg.pid");
    let written = || std::fs::read_to_string(&pid_file).is_ok_and(|pid| pid.ends_with('\n'));
    ws.block_on(async {
        tokio::pin!(call);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !written() {
            assert!(Instant::now() < deadline, "the shell never wrote bg.pid");
            tokio::select! {
                output = &mut call => panic!("the command ended before it was cancelled: {output:?}"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    });
    let pid = ws.read("bg.pid").trim().to_string();
    assert!(!process_alive(&pid), "background process {pid} survived cancellation");
}

#[test]
fn shell_runs_in_workdir_with_empty_stdin_and_reports_failures() {
    let ws = TestWorkspace::code();
    ws.write("sub/marker", "");
    let output = expect_ok(&ws.call("shell", json!({"command": "ls; cat", "workdir": "sub"})));
    assert!(output.contains("stdout:\nmarker\nstderr:\n(empty)"), "{output}");
    let failed = expect_error(&ws.call("shell", json!({"command": "echo oops >&2; exit 3"})));
    assert!(failed.starts_with("exit code: 3"), "{failed}");
    assert!(failed.ends_with("stdout:\n(empty)\nstderr:\noops"), "{failed}");
}

#[test]
fn shell_keeps_head_and_tail_of_huge_output() {
    let ws = TestWorkspace::code();
    let output = expect_ok(&ws.call("shell", json!({"command": "seq 1 200000"})));
    assert!(output.contains("stdout:\n1\n2\n3\n"), "{}", &output[..80]);
    assert!(output.contains("bytes of output omitted"));
    assert!(
        output.ends_with("199999\n200000\nstderr:\n(empty)"),
        "{}",
        &output[output.len() - 60..]
    );
    assert!(output.len() < 60_000, "{} bytes", output.len());
}

/// Whether `pid` is still running twenty seconds from now: SIGKILL is
/// delivered asynchronously, so a process killed a moment ago may still show,
/// for longer on a busy machine. A dead process returns at once.
fn process_alive(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // A zombie has exited; only a process still running counts.
        let running = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat.split_whitespace().nth(2).is_some_and(|state| state != "Z"),
            Err(_) => false,
        };
        if !running || Instant::now() > deadline {
            return running;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- the registry ----

#[test]
fn calls_run_concurrently_through_one_registry() {
    let ws = TestWorkspace::code();
    // A barrier instead of a stopwatch: each command checks in, then waits for
    // all four. Run one at a time, the first waits alone until its timeout and
    // never echoes; run together, all four finish however slow the machine.
    let call = |i: u32| {
        let command = format!(
            "mkdir -p barrier; touch barrier/{i}; \
             until [ \"$(ls barrier | wc -l)\" -ge 4 ]; do sleep 0.02; done; echo {i}"
        );
        ws.registry.call(&ws.ctx, "shell", json!({"command": command, "timeout_ms": 60_000}))
    };
    let outputs = ws.block_on(async {
        let (a, b, c, d) = tokio::join!(call(0), call(1), call(2), call(3));
        [a, b, c, d]
    });
    for (i, out) in outputs.iter().enumerate() {
        let text = out.text_content();
        assert!(text.contains(&format!("stdout:\n{i}")), "ran serially: {text}");
    }
}

// ---- findings from review: each pinned by a test ----

/// Opening a FIFO blocks until a writer appears; a blocking thread stuck
/// there can never be cancelled. Every file tool must refuse it at once.
#[test]
fn file_tools_refuse_fifos_instead_of_hanging() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let code = TestWorkspace::code();
        let status = std::process::Command::new("mkfifo").arg(code.path("pipe")).status();
        assert!(status.unwrap().success());
        let vault = TestWorkspace::vault();
        let status = std::process::Command::new("mkfifo").arg(vault.path("pipe.md")).status();
        assert!(status.unwrap().success());
        let mut messages = vec![
            code.call("read_file", json!({"path": "pipe"})),
            code.call("edit_file", json!({"path": "pipe", "old_str": "a", "new_str": "b"})),
            code.call("write_file", json!({"path": "pipe", "content": "x"})),
            code.call("write_file", json!({"path": "pipe", "content": "x", "mode": "append"})),
            vault.call("read_note", json!({"path": "pipe"})),
            vault.call("create_note", json!({"path": "pipe", "content": "x"})),
        ];
        messages.push(code.call("search", json!({"query": "x"})));
        tx.send(messages).unwrap();
    });
    let outputs = rx.recv_timeout(Duration::from_secs(20)).expect("a file tool hung on a FIFO");
    let (search, refused) = outputs.split_last().unwrap();
    for output in refused {
        let message = expect_error(output);
        assert!(message.contains("not a regular file"), "{message}");
    }
    assert_eq!(expect_ok(search), "No matches for 'x'.");
}

#[test]
fn edit_file_matches_exact_text_first_in_mixed_line_endings() {
    let ws = TestWorkspace::code();
    ws.write("mixed.txt", "a\nb\nc\r\n");
    expect_ok(
        &ws.call("edit_file", json!({"path": "mixed.txt", "old_str": "a\nb", "new_str": "A\nB"})),
    );
    assert_eq!(ws.read("mixed.txt"), "A\nB\nc\r\n");
}

#[test]
fn edit_file_gives_new_lines_the_files_crlf_endings() {
    let ws = TestWorkspace::code();
    ws.write("dos.txt", "a\r\nb\r\n");
    expect_ok(&ws.call("edit_file", json!({"path": "dos.txt", "old_str": "a", "new_str": "a\nz"})));
    assert_eq!(ws.read("dos.txt"), "a\r\nz\r\nb\r\n");
}

#[test]
fn read_file_cuts_an_endless_line_while_reading() {
    let ws = TestWorkspace::code();
    ws.write("one-line.json", format!("{}\nsecond\n", "x".repeat(1_000_000)));
    let output = expect_ok(&ws.call("read_file", json!({"path": "one-line.json"})));
    let (first, second) = output.split_once('\n').unwrap();
    assert_eq!(first, format!("1 | {}… [line cut; 1000000 bytes in all]", "x".repeat(2000)));
    assert_eq!(second, "2 | second");
}

#[test]
fn search_context_runs_past_matches_beyond_the_limit() {
    let ws = TestWorkspace::code();
    ws.write("f.txt", "foo\nfoo\nbar\n");
    let output = expect_ok(
        &ws.call("search", json!({"query": "foo", "max_results": 1, "context_lines": 2})),
    );
    assert_eq!(
        output,
        "2 matches in 1 file (showing the first 1)\n\nf.txt\n1:1: foo\n2- foo\n3- bar\n\n\
         [Results truncated: 1 of 2 matches shown. Narrow the query, or use path or glob, to see the rest.]"
    );
}
