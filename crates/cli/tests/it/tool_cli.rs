//! `axon tool` end to end: the real binary, real files, real exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use serde_json::Value;

fn axon(dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.current_dir(dir).timeout(Duration::from_secs(60));
    cmd
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    dir
}

#[test]
fn read_file_prints_numbered_lines() {
    let dir = workspace();
    axon(dir.path())
        .args(["tool", "call", "read_file", r#"{"path":"Cargo.toml","start_line":1,"end_line":3}"#])
        .assert()
        .success()
        .stdout("1 | [package]\n2 | name = \"demo\"\n3 | version = \"0.1.0\"\n");
}

#[test]
fn exit_codes_distinguish_tool_errors_from_usage_errors() {
    let dir = workspace();
    // The tool ran and failed: 1, message on stderr.
    axon(dir.path())
        .args(["tool", "call", "read_file", r#"{"path":"missing.txt"}"#])
        .assert()
        .code(1)
        .stderr("File not found: missing.txt\n");
    axon(dir.path())
        .args(["tool", "call", "read_file", r#"{"path":"../x"}"#])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("outside the workspace"));
    axon(dir.path())
        .args(["tool", "call", "read_file", r#"{"path": 7}"#])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("field 'path'"));
    // The command line was wrong: 2.
    axon(dir.path()).args(["tool", "call", "read_file", "{not json"]).assert().code(2);
    axon(dir.path()).args(["tool", "call", "read_file", "[1]"]).assert().code(2);
    axon(dir.path())
        .args(["tool", "call", "no_such_tool", "{}"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("Tool 'no_such_tool' is not available"));
    axon(dir.path()).args(["tool", "call", "read_note", "{}"]).assert().code(2);
    axon(dir.path()).args(["tool", "frobnicate"]).assert().code(2);
    axon(dir.path()).args(["tool", "list", "-C", "/definitely/not/here"]).assert().success();
    axon(dir.path())
        .args(["tool", "call", "glob", r#"{"pattern":"*"}"#, "-C", "/definitely/not/here"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot open workspace folder"));
}

#[test]
fn arguments_can_come_from_stdin_and_output_as_json() {
    let dir = workspace();
    let output = axon(dir.path())
        .args(["tool", "call", "write_file", "-", "--json"])
        .write_stdin(r#"{"path": "notes/hello.md", "content": "hi\n"}"#)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let value: Value = serde_json::from_slice(&output).unwrap();
    assert_eq!(value["is_error"], false);
    assert_eq!(value["content"][0]["text"], "Created 'notes/hello.md' (3 bytes, 1 lines)");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/hello.md")).unwrap(), "hi\n");
}

#[test]
fn web_fetch_by_hand_refuses_this_machine_unless_the_users_config_opens_it() {
    let (dir, home) = (workspace(), tempfile::tempdir().unwrap());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    let output = axon(dir.path())
        .env("AXON_HOME", home.path())
        .args(["tool", "call", "web_fetch", &serde_json::json!({"url": url}).to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Refused: 127.0.0.1 is at 127.0.0.1, a loopback address"), "{stderr}");
    assert!(stderr.contains("private_hosts"), "{stderr}");
}

#[test]
fn list_shows_each_profile_and_json_specs_carry_schemas() {
    let dir = workspace();
    let code =
        axon(dir.path()).args(["tool", "list"]).assert().success().get_output().stdout.clone();
    let code = String::from_utf8(code).unwrap();
    for name in ["read_file", "write_file", "edit_file", "list_dir", "search", "glob", "shell"] {
        assert!(code.contains(name), "{code}");
    }
    let json = axon(dir.path())
        .args(["tool", "list", "--profile", "vault", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let specs: Vec<Value> = serde_json::from_slice(&json).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s["name"].as_str().unwrap()).collect();
    // The web tools join both profiles (web_search too when a search API
    // is configured in the environment this runs in).
    assert_eq!(
        names[..6],
        ["read_note", "create_note", "list_folder", "search", "glob", "web_fetch"]
    );
    assert_eq!(specs[1]["input_schema"]["required"], serde_json::json!(["path", "content"]));
    assert_eq!(specs[0]["annotations"]["read_only"], true);
}

#[test]
fn vault_profile_works_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().to_str().unwrap();
    axon(dir.path())
        .args([
            "tool",
            "call",
            "create_note",
            r##"{"path":"Daily/2025-01-15","content":"# Today"}"##,
        ])
        .args(["--profile", "vault", "-C", vault])
        .assert()
        .success();
    axon(dir.path())
        .args(["tool", "call", "list_folder", r#"{"path":"/"}"#, "--profile", "vault"])
        .assert()
        .success()
        .stdout("[folder] Daily/\n");
    axon(dir.path())
        .args(["tool", "call", "read_note", r#"{"path":"daily/2025-01-15"}"#, "--profile", "vault"])
        .assert()
        .success()
        .stdout(
            "[No note at 'daily/2025-01-15.md'; showing 'Daily/2025-01-15.md' instead.]\n# Today\n",
        );
}

/// Crash safety: `write_file` killed with SIGKILL at arbitrary moments
/// leaves the file with its old content or its new content, never a mix.
#[test]
fn a_write_killed_midway_leaves_old_or_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data.txt");
    // Large enough that a kill often lands while the data is being written.
    let versions: Vec<String> = ["a", "b"].iter().map(|c| c.repeat(8 * 1024 * 1024)).collect();
    std::fs::write(&target, &versions[0]).unwrap();
    let mut interrupted = 0;
    for round in 0..24u64 {
        let next = &versions[(round as usize + 1) % 2];
        let args = serde_json::json!({"path": "data.txt", "content": next}).to_string();
        let mut child = Command::new(cargo_bin("axon"))
            .args(["tool", "call", "write_file", "-"])
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Writing the arguments may fail if the kill comes first; that is
        // one of the moments being tested.
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(args.as_bytes());
        drop(stdin);
        std::thread::sleep(Duration::from_millis(round * 3 % 60));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if !status.success() {
            interrupted += 1;
        }
        let content = std::fs::read(&target).unwrap();
        assert!(
            content == versions[0].as_bytes() || content == versions[1].as_bytes(),
            "round {round}: the file holds a mix ({} bytes)",
            content.len()
        );
    }
    assert!(interrupted > 0, "no write was ever interrupted; the test proved nothing");
}

/// `axon … | head -1`: the reader leaves early; axon must not panic.
#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..200_000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    let mut child = Command::new(cargo_bin("axon"))
        .args(["tool", "call", "read_file", r#"{"path":"big.txt"}"#])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end at once, before axon writes.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
}
