//! Background commands: `shell {background: true}`, `shell_output`,
//! `shell_kill`. Each test waits on what the command shows (a file it
//! waits for, its output, /proc), never on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::common::{TestWorkspace, expect_error, expect_ok};
use serde_json::json;

/// Starts `command` in the background and returns its id.
fn start(ws: &TestWorkspace, command: &str) -> String {
    let out = expect_ok(&ws.call("shell", json!({"command": command, "background": true})));
    let id = out.strip_prefix("Started in the background as ").unwrap().split(':').next().unwrap();
    id.to_string()
}

/// Reads `id` until what was read (all reads together) contains `want`;
/// returns every read's text, each without its first line (the state and
/// the command, whose text would match too).
fn read_until(ws: &TestWorkspace, id: &str, want: &str) -> Vec<String> {
    let mut reads = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let out = expect_ok(&ws.call("shell_output", json!({"id": id, "wait_ms": 2000})));
        let (state, body) = out.split_once('\n').unwrap_or((&out, ""));
        // The state line without the command.
        let state = state.split(": `").next().unwrap_or_default();
        reads.push(format!("{state}\n{body}"));
        if reads.concat().contains(want) {
            return reads;
        }
    }
    panic!("never saw {want:?} in {reads:?}");
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} still runs");
        std::thread::yield_now();
    }
}

/// The pid a command printed as `pid=N`.
fn printed_pid(text: &str) -> u32 {
    let at = text.find("pid=").unwrap() + 4;
    text[at..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn output_is_read_incrementally_and_the_end_is_reported() {
    let ws = TestWorkspace::code();
    let id =
        start(&ws, "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second >&2; exit 3");
    assert_eq!(id, "bg1");
    let first = read_until(&ws, &id, "first").concat();
    assert!(first.starts_with("[bg1] running for"), "{first}");
    assert!(!first.contains("second"), "{first}");
    // Nothing new: said so, and the command still runs.
    let idle = expect_ok(&ws.call("shell_output", json!({"id": id})));
    assert!(idle.contains("running") && idle.ends_with("(no new output)"), "{idle}");
    ws.write("go", "");
    let rest = read_until(&ws, &id, "exit code: 3").concat();
    assert!(rest.contains("second"), "stderr is read too: {rest}");
    assert!(!rest.contains("first"), "what was read is not read again: {rest}");
    let after = read_until(&ws, &id, "it has ended").concat();
    assert!(after.contains("ended: exit code: 3 after"), "{after}");
}

#[test]
fn shell_kill_stops_the_whole_group() {
    let ws = TestWorkspace::code();
    let id = start(&ws, "sleep 1000 & echo pid=$!; echo group=$$; wait");
    let text = read_until(&ws, &id, "group=").concat();
    let child = printed_pid(&text);
    assert!(alive(child));
    let out = expect_ok(&ws.call("shell_kill", json!({"id": id})));
    assert!(out.contains("was killed by shell_kill"), "{out}");
    wait_gone(child);
    let again = expect_ok(&ws.call("shell_kill", json!({"id": id})));
    assert!(again.contains("had already ended"), "{again}");
    let message = expect_error(&ws.call("shell_output", json!({"id": "bg9"})));
    assert!(message.contains("No background command 'bg9'; the known ones are bg1"), "{message}");
}

#[test]
fn commands_are_killed_when_the_tools_go_with_their_session() {
    let mut ws = TestWorkspace::code();
    let id = start(&ws, "sleep 1000 & echo pid=$!; wait");
    let child = printed_pid(&read_until(&ws, &id, "pid=").concat());
    assert!(alive(child));
    // The session's registry is dropped when the session ends.
    ws.registry = axon_tools::ToolRegistry::new();
    wait_gone(child);
}

#[test]
fn a_flood_stays_bounded_and_says_what_was_dropped() {
    let ws = TestWorkspace::code();
    let id = start(&ws, "head -c 5000000 /dev/zero | tr '\\0' x; echo; echo flood-done");
    let reads = read_until(&ws, &id, "it has ended");
    let all = reads.concat();
    assert!(all.contains("flood-done"), "the newest output is kept");
    assert!(all.contains("bytes of output were dropped"), "{}", &all[..200]);
    for read in &reads {
        assert!(read.len() <= 33 * 1024, "one read is bounded: {} bytes", read.len());
    }
}

/// Issue 36 §1: a flood of keys, trimmed wherever the reads fall, never
/// leaves part of a key at the start of what is read: each line read is a
/// whole key, which the masker recognises.
#[test]
fn a_flood_of_keys_is_trimmed_at_line_ends() {
    const KEY: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    let ws = TestWorkspace::code();
    // 2^17 lines, written at once.
    let id = start(
        &ws,
        &format!(
            "echo {KEY} > k; for i in $(seq 17); do cat k k > k2 && mv k2 k; done; cat k; \
             echo flood-done"
        ),
    );
    let reads = read_until(&ws, &id, "it has ended");
    let all = reads.concat();
    assert!(all.contains("bytes of output were dropped"), "the flood was trimmed");
    for read in &reads {
        for line in read.lines().skip(1) {
            if line.starts_with('[') || line.starts_with('(') || line == "flood-done" {
                continue;
            }
            assert_eq!(line, KEY, "a line read is a whole key");
        }
    }
}

#[test]
fn a_background_command_gets_the_shells_checks() {
    let ws = TestWorkspace::code();
    let message =
        expect_error(&ws.call(
            "shell",
            json!({"command": "true", "background": true, "workdir": "../elsewhere"}),
        ));
    assert!(message.contains("outside the workspace"), "{message}");
    let message = expect_error(&ws.call("shell", json!({"command": " ", "background": true})));
    assert!(message.contains("command is empty"), "{message}");
    // A timeout given is kept, and kills the group.
    let out = expect_ok(
        &ws.call("shell", json!({"command": "sleep 1000", "background": true, "timeout_ms": 1})),
    );
    let id = out.strip_prefix("Started in the background as ").unwrap().split(':').next().unwrap();
    let text = read_until(&ws, id, "it has ended").concat();
    assert!(text.contains("timed out after 1 ms and was killed"), "{text}");
}
